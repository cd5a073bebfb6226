"""Multi-step personal tasks for the L1 agent benchmark (``bench/agent.py``)."""
