"""Screens of the tutor app, one per module."""
