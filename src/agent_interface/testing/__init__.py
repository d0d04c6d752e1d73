"""In-memory reference implementations for tests and local development."""
