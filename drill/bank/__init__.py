"""Question banks: schema, loading with line-accurate validation, statistics."""
