# ruff: noqa: E501
"""Hand-written L2 (Coding) routing requests: write, explain, debug, review code; shell, SQL, regex.

Written for the evaluation set only, independently of models/data/. Never train on these.
"""

from __future__ import annotations

LABEL = "L2"

ITEMS: list[tuple[str, str]] = [
    # ---- long_paste ----
    (
        "long_paste",
        """Traceback (most recent call last):
  File "/home/mo/app/report.py", line 42, in <module>
    main()
  File "/home/mo/app/report.py", line 37, in main
    totals[row["region"]] += float(row["amount"])
KeyError: 'North'

here's the loop:

totals = {}
for row in reader:
    totals[row["region"]] += float(row["amount"])

what's wrong?""",
    ),
    (
        "long_paste",
        """const user = { name: "Ines", greet: () => { return "hi " + this.name } };
console.log(user.greet());

this prints "hi undefined" and I don't get why. the name is right there??""",
    ),
    (
        "long_paste",
        """CREATE TABLE products (id INT PRIMARY KEY, name TEXT, category TEXT);
CREATE TABLE sales (id INT PRIMARY KEY, product_id INT REFERENCES products(id), qty INT, unit_price NUMERIC, sold_at DATE);

write a query that gives monthly revenue per product for 2024, newest month first""",
    ),
    (
        "long_paste",
        """192.168.1.14 - - [10/Oct/2024:13:55:36 +0000] "GET /api/items?page=2 HTTP/1.1" 200 5120
10.0.0.7 - - [10/Oct/2024:13:55:38 +0000] "POST /login HTTP/1.1" 401 312
192.168.1.22 - - [10/Oct/2024:13:55:41 +0000] "GET /static/app.js HTTP/1.1" 304 0

write a regex that pulls out the method, the path and the status code from lines like these""",
    ),
    (
        "long_paste",
        """def get_active(users):
    result = []
    for i in range(0, len(users)):
        if users[i]['active'] == True:
            if not users[i]['email'] == None:
                result.append(users[i]['email'].lower())
    return result

review this please, anything unidiomatic?""",
    ),
    (
        "long_paste",
        """npm ERR! code ERESOLVE
npm ERR! ERESOLVE unable to resolve dependency tree
npm ERR!
npm ERR! While resolving: dashboard@0.3.0
npm ERR! Found: react@18.2.0
npm ERR! node_modules/react
npm ERR!   react@"^18.2.0" from the root project
npm ERR!
npm ERR! Could not resolve dependency:
npm ERR! peer react@"^16.8.0 || ^17.0.0" from react-beautiful-dnd@13.1.1

how do I fix this without breaking everything""",
    ),
    (
        "long_paste",
        """#!/bin/bash
for f in $(ls ~/Downloads/*.pdf); do
  mv $f ~/Documents/pdfs/
done

this breaks on files with spaces in the name (e.g. "tax return 2023.pdf"). can you fix it?""",
    ),
    (
        "long_paste",
        """FROM python:3.12
WORKDIR /app
COPY . .
RUN apt-get update && apt-get install -y build-essential
RUN pip install -r requirements.txt
CMD ["python", "server.py"]

the image is 1.4GB. how do I make it smaller?""",
    ),
    (
        "long_paste",
        """Hi,

Customers in Australia are seeing the wrong delivery date. I think parse_date assumes month-first:

def parse_date(s):
    return datetime.strptime(s, "%m/%d/%Y")

Their dates arrive as 31/01/2025. Can you write a fix that handles both formats sensibly, and tell me how to test it?

Thanks, Lucia""",
    ),
    (
        "long_paste",
        """Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()" because "name" is null
    at com.shop.Customer.initials(Customer.java:27)
    at com.shop.Main.main(Main.java:12)

line 27 is: return name.substring(0, 1) + surname.substring(0, 1);
why and how do I guard against it?""",
    ),
    (
        "long_paste",
        """order_id,date,amount,region
1001,2024-01-03,19.99,EU
1002,2024-01-17,5.00,US
1003,2024-02-02,42.50,EU
1004,2024-02-20,7.25,APAC

pandas code to pivot this: rows = month, columns = region, values = total amount""",
    ),
    (
        "long_paste",
        """error[E0502]: cannot borrow `v` as mutable because it is also borrowed as immutable
 --> src/main.rs:4:5
  |
3 |     let first = &v[0];
  |                  - immutable borrow occurs here
4 |     v.push(6);
  |     ^^^^^^^^^ mutable borrow occurs here
5 |     println!("{}", first);
  |                    ----- immutable borrow later used here

i'm new to rust, what's the idiomatic fix?""",
    ),
    # ---- terse ----
    ("terse", "regex for email"),
    ("terse", "python reverse a string"),
    ("terse", "sql count rows per day"),
    ("terse", "bash loop over files in dir"),
    ("terse", "js debounce function"),
    ("terse", "fizzbuzz in go"),
    ("terse", "git undo last commit"),
    ("terse", "cmd to find files over 100MB"),
    ("terse", "python read json file"),
    ("terse", "what does yield do in python"),
    ("terse", "c pointer to pointer example"),
    ("terse", "kill whatever is on port 3000"),
    # ---- typo ----
    ("typo", "how do i revrse a list in pyhton"),
    ("typo", "wirte a functon that cheks if a number is prime"),
    ("typo", "my for loop in javscript runs one time to many why"),
    ("typo", "wats the diffrence between == and === in js"),
    ("typo", "sql qeury to get the top 5 custmers by total spend"),
    ("typo", "git sais detached head what do i do"),
    ("typo", "need a regx that matches phone numbers like 555-123-4567"),
    ("typo", "python eror list index out of range how fix"),
    ("typo", "how to conect to postgres from node"),
    ("typo", "bash scirpt to rename all .jpeg files to .jpg"),
    ("typo", "css center a div verticaly pls"),
    ("typo", "why is my recursive fibonaci so slow in python"),
    # ---- api_style ----
    ("api_style", "fn slugify(s: str) -> str | lang=python | with tests"),
    (
        "api_style",
        "sql: top 5 customers by revenue; tables orders(id, customer_id, amount, created_at)",
    ),
    ("api_style", "regex: ISO date YYYY-MM-DD, anchored"),
    ("api_style", "lang=go task='http server that returns hello on /'"),
    ("api_style", 'POST /codegen {"lang": "python", "task": "parse a CSV and sum column 3"}'),
    ("api_style", "explain: awk -F, '{s+=$3} END {print s}' data.csv"),
    ("api_style", "ts: type for a User with id, name and optional email"),
    ("api_style", "review(lang='python', code='def add(a,b): return a+b')"),
    # ---- polite ----
    (
        "polite",
        "Could you please write a Python function that removes duplicates from a list while keeping the order?",
    ),
    ("polite", "Would you mind explaining what this line does: const [a, ...rest] = arr;"),
    (
        "polite",
        "I'd appreciate help writing a SQL query that finds employees who earn more than their manager.",
    ),
    (
        "polite",
        "Please could you review my function for readability? def f(x): return [i for i in x if i%2==0]",
    ),
    ("polite", "Could you kindly show me how to read a file line by line in C?"),
    (
        "polite",
        "Hello! Could you help me write a bash one-liner that counts unique IP addresses in access.log?",
    ),
    (
        "polite",
        "Would you be able to explain why my Python class attribute is shared between all instances?",
    ),
    (
        "polite",
        "Please, could you convert this JavaScript to TypeScript with proper types? function add(a, b) { return a + b }",
    ),
    (
        "polite",
        "If possible, could you write unit tests for a function that validates UK postcodes?",
    ),
    (
        "polite",
        "Could you help me understand the difference between a process and a thread, with a small Python example?",
    ),
    # ---- slang ----
    ("slang", "yo how do i make a python script that pings a site every 5 min"),
    ("slang", "bro my react app rerenders like crazy, whats up with useEffect"),
    ("slang", "ngl regex scares me, gimme one for hex colours"),
    ("slang", "my git is cooked, merged the wrong branch into main, how do i undo"),
    ("slang", "lowkey need a sql query for people who signed up last week"),
    ("slang", "fam write me a quick js func to shuffle an array"),
    ("slang", 'this bash is sus, what does rm -rf "$DIR"/* do if DIR is empty'),
    ("slang", "why tf is my docker container exiting with 137"),
    ("slang", "vibe check my python: for i in range(len(xs)): print(xs[i])"),
    ("slang", "need a lil python snippet to flatten a nested list"),
    # ---- non_native ----
    ("non_native", "Please, how I can make a loop in Python that print the numbers from 1 to 10?"),
    ("non_native", "I have error in my Java code 'cannot find symbol', what it means?"),
    ("non_native", "How to write SQL for take the last record of each user?"),
    ("non_native", "Can you explain me what is a 'callback' in JavaScript with example?"),
    ("non_native", "I need function in Python for calculate the average of a list, please."),
    ("non_native", "Why my C program give 'segmentation fault' when I use scanf with char array?"),
    (
        "non_native",
        "How is the regular expression for validate a password with minimum 8 characters and one number?",
    ),
    ("non_native", "Please write me the command for see which process use the port 8080 in Linux."),
    ("non_native", "In Python, which is difference between list and tuple? When I use each one?"),
    ("non_native", "I don't understand the decorator in Python, you can show simple example?"),
    ("non_native", "How I make a HTTP request in Go?"),
    ("non_native", "My git push is rejected, it say 'non-fast-forward'. What I must do?"),
    # ---- mixed ----
    ("mixed", "lol my cat just walked over my keyboard. anyway, write a regex for uk postcodes"),
    ("mixed", "thanks for the book recs! unrelated: how do I parse command line args in python?"),
    ("mixed", "I'm so tired of this bug. `if x = 5:` gives SyntaxError in python, why?"),
    ("mixed", "feeling dumb today. why does 0.1 + 0.2 not equal 0.3 in JavaScript?"),
    (
        "mixed",
        "my boss wants a report by friday, ugh. I need a python script that merges all the CSVs in a folder into one.",
    ),
    ("mixed", "Good morning! Coffee's brewing. Quick one: how do I squash my last 3 git commits?"),
    (
        "mixed",
        "We moved house last week and everything is chaos. Anyway, what's the SQL to delete duplicate rows but keep one of each?",
    ),
    ("mixed", "I love your explanations. Can you explain this regex? ^(?=.*\\d)(?=.*[a-z]).{8,}$"),
    (
        "mixed",
        "Not urgent, but when you have a sec: write a Python function that converts roman numerals to integers",
    ),
    (
        "mixed",
        "Interview tomorrow and I'm nervous. Can you give me a clean binary search in Python to practise with?",
    ),
    # ---- boundary ----
    ("boundary", "write a script that renames my photos by the date they were taken"),
    ("boundary", "what's the shell command to check disk space"),
    ("boundary", "give me a cron expression for every monday at 9am"),
    ("boundary", "write a python script that adds todos from a csv file"),
    ("boundary", "write the HTML for a signup form with name, email and password"),
    ("boundary", "build a React component that shows a sortable table"),
    ("boundary", "how would I write a simple reminder app in Flask?"),
    ("boundary", "what command would count the lines in all the .py files in a folder?"),
    ("boundary", "explain what this does: find . -name '*.log' -mtime +7 -delete"),
    ("boundary", "write a SQL query that compares this month's sales with last month's"),
    ("boundary", "compare two lists in python and return the items missing from the second"),
    ("boundary", "write a bash alias that prints my todo.txt sorted by date"),
    ("boundary", "Which is faster in Python for membership tests, a list or a set, and why?"),
    ("boundary", "write a function that converts celsius to fahrenheit"),
    ("boundary", "how do I calculate the number of days between two dates in JavaScript?"),
    (
        "boundary",
        "my README says to run pip install -e .[dev] but zsh says 'no matches found'. why?",
    ),
    ("boundary", "write a regex that finds dates like 12/03/2024 in a block of text"),
    ("boundary", "I need a Python class for a checklist item with a done flag and a toggle method"),
    (
        "boundary",
        "What does 'Permission denied (publickey)' mean when I git push, and how do I fix it?",
    ),
    (
        "boundary",
        "is this safe from SQL injection? cursor.execute(f\"SELECT * FROM users WHERE name = '{name}'\")",
    ),
    (
        "boundary",
        "my mac says 'command not found: python' but I installed it, how do I fix my PATH",
    ),
    ("boundary", "write a one-liner that converts all the .heic photos in a folder to jpg"),
    ("boundary", "translate this Python to JavaScript: print(sum(x*x for x in range(10)))"),
    (
        "boundary",
        "rewrite this loop as a list comprehension: result = []\nfor x in nums:\n    if x > 0:\n        result.append(x * 2)",
    ),
    ("boundary", "I want a tiny command-line todo app in Python, 50 lines max"),
    ("boundary", "write me a crontab line that runs backup.sh every night at 2am"),
]
