"""The turn protocol: Route -> Answer -> Summary over one engine, inside one transaction."""
