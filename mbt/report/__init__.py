"""Reporters: each formats a result object as text or JSON; none computes anything."""
