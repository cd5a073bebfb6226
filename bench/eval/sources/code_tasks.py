# ruff: noqa: E501
"""Hand-written small Python coding tasks with assert-based tests (evaluation only).

Each task: id, entry_point, prompt, tests. The evaluator extracts the first ```python block of
the model's answer, execs it, then runs `tests` in a subprocess with a timeout. Reference
solutions live in ../code_solutions.py. Never train on these.
"""

from __future__ import annotations

TASKS: list[dict[str, str]] = [
    {
        "id": "ct01",
        "entry_point": "reverse_words",
        "prompt": "Write a Python function `reverse_words(s)` that returns the words of the string `s` in reverse order, joined by single spaces. Example: reverse_words('the cat sat') == 'sat cat the'.",
        "tests": "assert reverse_words('the cat sat') == 'sat cat the'\nassert reverse_words('hello') == 'hello'\nassert reverse_words('  a   b ') == 'b a'\nassert reverse_words('') == ''\n",
    },
    {
        "id": "ct02",
        "entry_point": "count_vowels",
        "prompt": "Write a Python function `count_vowels(s)` that returns how many vowels (a, e, i, o, u, upper or lower case) are in the string `s`.",
        "tests": "assert count_vowels('banana') == 3\nassert count_vowels('SKY') == 0\nassert count_vowels('AeIoU') == 5\nassert count_vowels('') == 0\n",
    },
    {
        "id": "ct03",
        "entry_point": "fizzbuzz",
        "prompt": "Write a Python function `fizzbuzz(n)` that returns a list of strings for the numbers 1 to n: 'Fizz' for multiples of 3, 'Buzz' for multiples of 5, 'FizzBuzz' for multiples of both, otherwise the number as a string.",
        "tests": "assert fizzbuzz(5) == ['1', '2', 'Fizz', '4', 'Buzz']\nassert fizzbuzz(15)[-1] == 'FizzBuzz'\nassert fizzbuzz(0) == []\nassert len(fizzbuzz(30)) == 30\n",
    },
    {
        "id": "ct04",
        "entry_point": "celsius_to_fahrenheit",
        "prompt": "Write a Python function `celsius_to_fahrenheit(c)` that converts a temperature in degrees Celsius to degrees Fahrenheit and returns it as a number.",
        "tests": "assert abs(celsius_to_fahrenheit(0) - 32) < 1e-9\nassert abs(celsius_to_fahrenheit(100) - 212) < 1e-9\nassert abs(celsius_to_fahrenheit(-40) + 40) < 1e-9\nassert abs(celsius_to_fahrenheit(37) - 98.6) < 1e-6\n",
    },
    {
        "id": "ct05",
        "entry_point": "is_palindrome",
        "prompt": "Write a Python function `is_palindrome(s)` that returns True if the string `s` reads the same forwards and backwards, ignoring case and spaces, and False otherwise.",
        "tests": "assert is_palindrome('racecar') is True\nassert is_palindrome('Never odd or even') is True\nassert is_palindrome('python') is False\nassert is_palindrome('') is True\n",
    },
    {
        "id": "ct06",
        "entry_point": "factorial",
        "prompt": "Write a Python function `factorial(n)` that returns n! for a non-negative integer n (factorial(0) is 1).",
        "tests": "assert factorial(0) == 1\nassert factorial(1) == 1\nassert factorial(5) == 120\nassert factorial(10) == 3628800\n",
    },
    {
        "id": "ct07",
        "entry_point": "fibonacci",
        "prompt": "Write a Python function `fibonacci(n)` that returns the n-th Fibonacci number, where fibonacci(0) == 0 and fibonacci(1) == 1.",
        "tests": "assert fibonacci(0) == 0\nassert fibonacci(1) == 1\nassert fibonacci(2) == 1\nassert fibonacci(10) == 55\nassert fibonacci(30) == 832040\n",
    },
    {
        "id": "ct08",
        "entry_point": "sum_of_evens",
        "prompt": "Write a Python function `sum_of_evens(nums)` that returns the sum of the even integers in the list `nums`.",
        "tests": "assert sum_of_evens([1, 2, 3, 4]) == 6\nassert sum_of_evens([]) == 0\nassert sum_of_evens([1, 3, 5]) == 0\nassert sum_of_evens([-2, 2, 7]) == 0\n",
    },
    {
        "id": "ct09",
        "entry_point": "largest",
        "prompt": "Write a Python function `largest(nums)` that returns the largest number in a non-empty list `nums`.",
        "tests": "assert largest([3, 9, 2]) == 9\nassert largest([-5, -1, -7]) == -1\nassert largest([4]) == 4\n",
    },
    {
        "id": "ct10",
        "entry_point": "is_prime",
        "prompt": "Write a Python function `is_prime(n)` that returns True if the integer `n` is a prime number and False otherwise (numbers below 2 are not prime).",
        "tests": "assert is_prime(2) is True\nassert is_prime(17) is True\nassert is_prime(1) is False\nassert is_prime(0) is False\nassert is_prime(21) is False\nassert is_prime(97) is True\n",
    },
    {
        "id": "ct11",
        "entry_point": "char_frequency",
        "prompt": "Write a Python function `char_frequency(s)` that returns a dict mapping each character of the string `s` to the number of times it appears.",
        "tests": "assert char_frequency('aab') == {'a': 2, 'b': 1}\nassert char_frequency('') == {}\nassert char_frequency('hello')['l'] == 2\n",
    },
    {
        "id": "ct12",
        "entry_point": "remove_duplicates",
        "prompt": "Write a Python function `remove_duplicates(items)` that returns a new list with duplicates removed, keeping the first occurrence of each item in its original order.",
        "tests": "assert remove_duplicates([3, 1, 3, 2, 1]) == [3, 1, 2]\nassert remove_duplicates([]) == []\nassert remove_duplicates(['a', 'a']) == ['a']\n",
    },
    {
        "id": "ct13",
        "entry_point": "capitalize_words",
        "prompt": "Write a Python function `capitalize_words(s)` that returns the string with the first letter of every space-separated word in upper case and the rest of each word in lower case. Example: capitalize_words('hello wORLD') == 'Hello World'.",
        "tests": "assert capitalize_words('hello wORLD') == 'Hello World'\nassert capitalize_words('a') == 'A'\nassert capitalize_words('python is fun') == 'Python Is Fun'\n",
    },
    {
        "id": "ct14",
        "entry_point": "gcd",
        "prompt": "Write a Python function `gcd(a, b)` that returns the greatest common divisor of two positive integers.",
        "tests": "assert gcd(12, 18) == 6\nassert gcd(7, 13) == 1\nassert gcd(100, 10) == 10\nassert gcd(9, 9) == 9\n",
    },
    {
        "id": "ct15",
        "entry_point": "flatten",
        "prompt": "Write a Python function `flatten(lists)` that takes a list of lists and returns one list with all their elements in order (only one level deep).",
        "tests": "assert flatten([[1, 2], [3], []]) == [1, 2, 3]\nassert flatten([]) == []\nassert flatten([['a'], ['b', 'c']]) == ['a', 'b', 'c']\n",
    },
    {
        "id": "ct16",
        "entry_point": "count_words",
        "prompt": "Write a Python function `count_words(s)` that returns the number of words in the string `s`, where words are separated by whitespace.",
        "tests": "assert count_words('the quick brown fox') == 4\nassert count_words('') == 0\nassert count_words('  spaced   out  ') == 2\n",
    },
    {
        "id": "ct17",
        "entry_point": "square_list",
        "prompt": "Write a Python function `square_list(nums)` that returns a new list containing the square of each number in `nums`.",
        "tests": "assert square_list([1, 2, 3]) == [1, 4, 9]\nassert square_list([]) == []\nassert square_list([-4]) == [16]\n",
    },
    {
        "id": "ct18",
        "entry_point": "average",
        "prompt": "Write a Python function `average(nums)` that returns the arithmetic mean of the list `nums` as a float, or 0.0 if the list is empty.",
        "tests": "assert average([1, 2, 3, 4]) == 2.5\nassert average([]) == 0.0\nassert average([5]) == 5.0\n",
    },
    {
        "id": "ct19",
        "entry_point": "is_anagram",
        "prompt": "Write a Python function `is_anagram(a, b)` that returns True if the two strings contain exactly the same letters in a different (or the same) order, ignoring case.",
        "tests": "assert is_anagram('listen', 'silent') is True\nassert is_anagram('Dusty', 'study') is True\nassert is_anagram('abc', 'abd') is False\nassert is_anagram('aab', 'ab') is False\n",
    },
    {
        "id": "ct20",
        "entry_point": "to_binary",
        "prompt": "Write a Python function `to_binary(n)` that returns the binary representation of a non-negative integer `n` as a string without any prefix. Example: to_binary(5) == '101'.",
        "tests": "assert to_binary(5) == '101'\nassert to_binary(0) == '0'\nassert to_binary(8) == '1000'\nassert to_binary(255) == '11111111'\n",
    },
    {
        "id": "ct21",
        "entry_point": "is_leap_year",
        "prompt": "Write a Python function `is_leap_year(year)` that returns True if `year` is a leap year in the Gregorian calendar (divisible by 4, except centuries unless divisible by 400).",
        "tests": "assert is_leap_year(2024) is True\nassert is_leap_year(2023) is False\nassert is_leap_year(1900) is False\nassert is_leap_year(2000) is True\n",
    },
    {
        "id": "ct22",
        "entry_point": "parse_numbers",
        "prompt": "Write a Python function `parse_numbers(s)` that takes a comma-separated string of integers like '1, 2,3' and returns them as a list of ints. An empty string gives an empty list.",
        "tests": "assert parse_numbers('1,2,3') == [1, 2, 3]\nassert parse_numbers('10, -4, 7') == [10, -4, 7]\nassert parse_numbers('') == []\n",
    },
    {
        "id": "ct23",
        "entry_point": "second_largest",
        "prompt": "Write a Python function `second_largest(nums)` that returns the second largest distinct value in the list `nums`, or None if there is no such value.",
        "tests": "assert second_largest([4, 1, 7, 3]) == 4\nassert second_largest([5, 5, 5]) is None\nassert second_largest([2, 9, 9]) == 2\nassert second_largest([1]) is None\n",
    },
    {
        "id": "ct24",
        "entry_point": "merge_sorted",
        "prompt": "Write a Python function `merge_sorted(a, b)` that takes two lists already sorted in ascending order and returns one sorted list with all elements of both.",
        "tests": "assert merge_sorted([1, 4, 6], [2, 3, 7]) == [1, 2, 3, 4, 6, 7]\nassert merge_sorted([], [1]) == [1]\nassert merge_sorted([], []) == []\nassert merge_sorted([1, 1], [1]) == [1, 1, 1]\n",
    },
    {
        "id": "ct25",
        "entry_point": "longest_word",
        "prompt": "Write a Python function `longest_word(s)` that returns the longest word in the sentence `s` (words separated by spaces). If several words tie, return the first one.",
        "tests": "assert longest_word('I love programming') == 'programming'\nassert longest_word('cat dog') == 'cat'\nassert longest_word('a bb cc') == 'bb'\n",
    },
    {
        "id": "ct26",
        "entry_point": "digit_sum",
        "prompt": "Write a Python function `digit_sum(n)` that returns the sum of the decimal digits of a non-negative integer `n`.",
        "tests": "assert digit_sum(123) == 6\nassert digit_sum(0) == 0\nassert digit_sum(9999) == 36\n",
    },
    {
        "id": "ct27",
        "entry_point": "reverse_string",
        "prompt": "Write a Python function `reverse_string(s)` that returns the string `s` reversed.",
        "tests": "assert reverse_string('abc') == 'cba'\nassert reverse_string('') == ''\nassert reverse_string('a b') == 'b a'\n",
    },
    {
        "id": "ct28",
        "entry_point": "count_char",
        "prompt": "Write a Python function `count_char(s, ch)` that returns how many times the single character `ch` appears in the string `s` (case-sensitive).",
        "tests": "assert count_char('banana', 'a') == 3\nassert count_char('Banana', 'b') == 0\nassert count_char('', 'x') == 0\n",
    },
    {
        "id": "ct29",
        "entry_point": "kg_to_pounds",
        "prompt": "Write a Python function `kg_to_pounds(kg)` that converts kilograms to pounds (1 kg = 2.20462 lb) and returns the result rounded to 2 decimal places.",
        "tests": "assert kg_to_pounds(1) == 2.2\nassert kg_to_pounds(0) == 0\nassert kg_to_pounds(10) == 22.05\nassert kg_to_pounds(70) == 154.32\n",
    },
    {
        "id": "ct30",
        "entry_point": "filter_positive",
        "prompt": "Write a Python function `filter_positive(nums)` that returns a list of only the numbers in `nums` that are greater than zero, in their original order.",
        "tests": "assert filter_positive([3, -1, 0, 5]) == [3, 5]\nassert filter_positive([]) == []\nassert filter_positive([-2, -3]) == []\n",
    },
    {
        "id": "ct31",
        "entry_point": "seconds_to_hms",
        "prompt": "Write a Python function `seconds_to_hms(seconds)` that converts a non-negative number of seconds into a string 'HH:MM:SS' with two digits for each part. Example: seconds_to_hms(3661) == '01:01:01'.",
        "tests": "assert seconds_to_hms(3661) == '01:01:01'\nassert seconds_to_hms(0) == '00:00:00'\nassert seconds_to_hms(59) == '00:00:59'\nassert seconds_to_hms(86399) == '23:59:59'\n",
    },
    {
        "id": "ct32",
        "entry_point": "chunk",
        "prompt": "Write a Python function `chunk(items, size)` that splits the list `items` into consecutive lists of length `size` (the last one may be shorter).",
        "tests": "assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]\nassert chunk([], 3) == []\nassert chunk([1, 2, 3], 3) == [[1, 2, 3]]\n",
    },
    {
        "id": "ct33",
        "entry_point": "word_lengths",
        "prompt": "Write a Python function `word_lengths(s)` that returns a list with the length of each space-separated word in the string `s`.",
        "tests": "assert word_lengths('hi there you') == [2, 5, 3]\nassert word_lengths('') == []\nassert word_lengths('a') == [1]\n",
    },
    {
        "id": "ct34",
        "entry_point": "is_sorted",
        "prompt": "Write a Python function `is_sorted(nums)` that returns True if the list `nums` is in non-decreasing order and False otherwise.",
        "tests": "assert is_sorted([1, 2, 2, 5]) is True\nassert is_sorted([3, 1]) is False\nassert is_sorted([]) is True\nassert is_sorted([7]) is True\n",
    },
    {
        "id": "ct35",
        "entry_point": "min_max",
        "prompt": "Write a Python function `min_max(nums)` that returns a tuple (smallest, largest) for a non-empty list of numbers.",
        "tests": "assert min_max([3, 1, 4, 1, 5]) == (1, 5)\nassert min_max([2]) == (2, 2)\nassert min_max([-3, -8]) == (-8, -3)\n",
    },
    {
        "id": "ct36",
        "entry_point": "caesar_shift",
        "prompt": "Write a Python function `caesar_shift(s, k)` that shifts every lowercase letter a-z in `s` forward by `k` places in the alphabet, wrapping from z back to a. Other characters stay unchanged.",
        "tests": "assert caesar_shift('abc', 1) == 'bcd'\nassert caesar_shift('xyz', 3) == 'abc'\nassert caesar_shift('hi there!', 0) == 'hi there!'\nassert caesar_shift('a-b', 2) == 'c-d'\n",
    },
    {
        "id": "ct37",
        "entry_point": "count_upper",
        "prompt": "Write a Python function `count_upper(s)` that returns the number of upper-case letters in the string `s`.",
        "tests": "assert count_upper('Hello World') == 2\nassert count_upper('abc') == 0\nassert count_upper('ABC def G') == 4\n",
    },
    {
        "id": "ct38",
        "entry_point": "times_table",
        "prompt": "Write a Python function `times_table(n)` that returns the list [n*1, n*2, ..., n*10].",
        "tests": "assert times_table(3) == [3, 6, 9, 12, 15, 18, 21, 24, 27, 30]\nassert times_table(0) == [0] * 10\nassert len(times_table(7)) == 10\n",
    },
    {
        "id": "ct39",
        "entry_point": "initials",
        "prompt": "Write a Python function `initials(name)` that returns the upper-case first letter of each space-separated part of a name. Example: initials('ada lovelace') == 'AL'.",
        "tests": "assert initials('ada lovelace') == 'AL'\nassert initials('Grace Brewster Hopper') == 'GBH'\nassert initials('plato') == 'P'\n",
    },
    {
        "id": "ct40",
        "entry_point": "clamp",
        "prompt": "Write a Python function `clamp(x, low, high)` that returns `x` limited to the range [low, high]: low if x is below it, high if x is above it, otherwise x.",
        "tests": "assert clamp(5, 0, 10) == 5\nassert clamp(-3, 0, 10) == 0\nassert clamp(42, 0, 10) == 10\nassert clamp(0, 0, 0) == 0\n",
    },
]
