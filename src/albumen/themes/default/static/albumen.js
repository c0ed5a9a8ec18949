/* Albumen viewer: progressive enhancement over the per-photo pages. */
