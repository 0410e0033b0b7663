// A fixed self-signed certificate for local HTTPS servers that stand in for a remote host: valid
// for browserai.test and 127.0.0.1 from 2000 to 2099, so tests reach it by name through a proxy
// (which resolves every host to 127.0.0.1) and trust it with tls.setDefaultCACertificates.
export const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgtqOtoeDV5s2HQZs+
eQp5TeFEA8ezDIKYybwmy+D04JWhRANCAASoQ4+o+8/pnLRuDweGeP8YkrdIH4E5
lkPoVzjNUujNWAkRGWZXddihL12H0dw4Ssf4pCklRcaIxONrlyB//vOt
-----END PRIVATE KEY-----
`;
export const CERT = `-----BEGIN CERTIFICATE-----
MIIBdzCCARygAwIBAgIBATAKBggqhkjOPQQDAjAZMRcwFQYDVQQDDA5icm93c2Vy
YWkudGVzdDAgFw0wMDAxMDEwMDAwMDBaGA8yMDk5MTIzMTAwMDAwMFowGTEXMBUG
A1UEAwwOYnJvd3NlcmFpLnRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASo
Q4+o+8/pnLRuDweGeP8YkrdIH4E5lkPoVzjNUujNWAkRGWZXddihL12H0dw4Ssf4
pCklRcaIxONrlyB//vOto1MwUTAPBgNVHRMBAf8EBTADAQH/MB8GA1UdEQQYMBaC
DmJyb3dzZXJhaS50ZXN0hwR/AAABMB0GA1UdDgQWBBTGg6ZJRRTxlGaNVZ3AG5SC
BWKN1jAKBggqhkjOPQQDAgNJADBGAiEAmC+6uYMIu5jhQoklePyCZGzPgCXNlLCr
aUXTOibglIwCIQDHqVgqq8Y+liLy0j73zotCbYjRWubjkpud80MT9UFk3Q==
-----END CERTIFICATE-----
`;
