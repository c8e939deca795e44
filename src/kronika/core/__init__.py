"""The pure domain of kronika: values, scoring, budgets, time expressions and prompt text.

Nothing in this package performs I/O, reads the clock or the environment.
"""
