"""Widgets of the tutor app, one per module."""
