"""Helpers shared by the test areas: ``from helpers.store import object_cache`` (``tests`` is on pytest's path)."""
