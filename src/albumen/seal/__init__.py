"""Password albums, end-to-end encrypted: every file of such an album is sealed at build time
(format), with a key per album kept beside the private-link secret (keys), planned under names that
say nothing (plan), listed in an encrypted manifest behind one generic unlock page (pages), and
decrypted in the visitor's browser by the theme's sealed.js with the Web Crypto API."""
