"""Long-lived agent sessions: managed agent instances, native interactive sessions with
provider-issued control claims, and attachable terminals with replay."""
