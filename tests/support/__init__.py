"""Helpers shared by the test modules (never tests themselves): tokenizers built once per
session, hypothesis text, crafted files. ``tests/conftest.py`` puts this folder on the path."""
