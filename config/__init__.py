"""Settings: settings.yaml, profiles and environment variables, as pydantic-settings models."""
