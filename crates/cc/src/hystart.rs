//! HyStart++ (RFC 9406) — placeholder.
