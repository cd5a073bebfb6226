"""Reference solutions for bench/eval/code_tasks.jsonl (one function per task entry_point).

Owns only the reference answers used by check_code_tasks.py to prove each task's tests are
satisfiable. Must not be used as training data, and imports nothing outside the stdlib.
"""

from __future__ import annotations


def reverse_words(s: str) -> str:
    return " ".join(reversed(s.split()))


def count_vowels(s: str) -> int:
    return sum(1 for ch in s.lower() if ch in "aeiou")


def fizzbuzz(n: int) -> list[str]:
    out: list[str] = []
    for i in range(1, n + 1):
        if i % 15 == 0:
            out.append("FizzBuzz")
        elif i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        else:
            out.append(str(i))
    return out


def celsius_to_fahrenheit(c: float) -> float:
    return c * 9 / 5 + 32


def is_palindrome(s: str) -> bool:
    cleaned = s.replace(" ", "").lower()
    return cleaned == cleaned[::-1]


def factorial(n: int) -> int:
    result = 1
    for i in range(2, n + 1):
        result *= i
    return result


def fibonacci(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def sum_of_evens(nums: list[int]) -> int:
    return sum(n for n in nums if n % 2 == 0)


def largest(nums: list[float]) -> float:
    return max(nums)


def is_prime(n: int) -> bool:
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


def char_frequency(s: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    return counts


def remove_duplicates(items: list) -> list:
    seen: set = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def capitalize_words(s: str) -> str:
    return " ".join(w[:1].upper() + w[1:].lower() for w in s.split(" "))


def gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def flatten(lists: list[list]) -> list:
    return [x for sub in lists for x in sub]


def count_words(s: str) -> int:
    return len(s.split())


def square_list(nums: list[float]) -> list[float]:
    return [n * n for n in nums]


def average(nums: list[float]) -> float:
    return sum(nums) / len(nums) if nums else 0.0


def is_anagram(a: str, b: str) -> bool:
    return sorted(a.lower()) == sorted(b.lower())


def to_binary(n: int) -> str:
    return bin(n)[2:]


def is_leap_year(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def parse_numbers(s: str) -> list[int]:
    return [int(part) for part in s.split(",") if part.strip()]


def second_largest(nums: list[float]) -> float | None:
    distinct = sorted(set(nums), reverse=True)
    return distinct[1] if len(distinct) > 1 else None


def merge_sorted(a: list, b: list) -> list:
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out + a[i:] + b[j:]


def longest_word(s: str) -> str:
    best = ""
    for word in s.split(" "):
        if len(word) > len(best):
            best = word
    return best


def digit_sum(n: int) -> int:
    return sum(int(d) for d in str(n))


def reverse_string(s: str) -> str:
    return s[::-1]


def count_char(s: str, ch: str) -> int:
    return s.count(ch)


def kg_to_pounds(kg: float) -> float:
    return round(kg * 2.20462, 2)


def filter_positive(nums: list[float]) -> list[float]:
    return [n for n in nums if n > 0]


def seconds_to_hms(seconds: int) -> str:
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"


def chunk(items: list, size: int) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def word_lengths(s: str) -> list[int]:
    return [len(w) for w in s.split()]


def is_sorted(nums: list[float]) -> bool:
    return all(nums[i] <= nums[i + 1] for i in range(len(nums) - 1))


def min_max(nums: list[float]) -> tuple[float, float]:
    return (min(nums), max(nums))


def caesar_shift(s: str, k: int) -> str:
    out = []
    for ch in s:
        if "a" <= ch <= "z":
            out.append(chr((ord(ch) - ord("a") + k) % 26 + ord("a")))
        else:
            out.append(ch)
    return "".join(out)


def count_upper(s: str) -> int:
    return sum(1 for ch in s if ch.isupper())


def times_table(n: int) -> list[int]:
    return [n * i for i in range(1, 11)]


def initials(name: str) -> str:
    return "".join(part[0].upper() for part in name.split())


def clamp(x: float, low: float, high: float) -> float:
    return max(low, min(x, high))
