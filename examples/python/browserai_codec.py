"""Payload encryption that reads and writes what browserai-temporal's workers and clients do.

The format is the one of Temporal's encryption samples (TypeScript, Go, Python): AES-256-GCM over
the serialized Payload, a 12-byte nonce before the ciphertext and the 16-byte tag after it, with
metadata ``encoding: binary/encrypted`` and ``encryption-key-id``. The same environment as our
worker: TEMPORAL_PAYLOAD_KEY (base64 of 32 bytes), TEMPORAL_PAYLOAD_KEY_ID (default ``default``)
and TEMPORAL_PAYLOAD_DECRYPT_KEYS (``id:base64,...``: earlier keys that still decrypt).

As a command it encodes or decodes payloads in the remote codec's JSON format
(``{"payloads": [{"metadata": {...base64}, "data": base64}]}``) from stdin to stdout:
``python browserai_codec.py decode < payloads.json``.
"""

import asyncio
import base64
import dataclasses
import json
import os
import sys
from typing import Iterable, Mapping

import temporalio.converter
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload

ENCODING = b"binary/encrypted"
KEY_ID = "encryption-key-id"
NONCE_BYTES = 12


class EncryptionCodec(temporalio.converter.PayloadCodec):
    def __init__(self, key: bytes, key_id: str, decrypt_keys: Mapping[str, bytes] | None = None) -> None:
        keys = {key_id: key, **(decrypt_keys or {})}
        if any(len(k) != 32 for k in keys.values()):
            raise ValueError("Each payload key must be 32 bytes (base64 of 32 random bytes): openssl rand -base64 32")
        self.key_id = key_id
        self._ciphers = {kid: AESGCM(k) for kid, k in keys.items()}

    async def encode(self, payloads: Iterable[Payload]) -> list[Payload]:
        cipher = self._ciphers[self.key_id]
        sealed = []
        for payload in payloads:
            nonce = os.urandom(NONCE_BYTES)
            sealed.append(
                Payload(
                    metadata={"encoding": ENCODING, KEY_ID: self.key_id.encode()},
                    data=nonce + cipher.encrypt(nonce, payload.SerializeToString(), None),
                )
            )
        return sealed

    async def decode(self, payloads: Iterable[Payload]) -> list[Payload]:
        opened = []
        for payload in payloads:
            if payload.metadata.get("encoding") != ENCODING:
                opened.append(payload)
                continue
            key_id = payload.metadata.get(KEY_ID, b"").decode()
            cipher = self._ciphers.get(key_id)
            if cipher is None:
                raise ValueError(
                    f'Payload encrypted with key id "{key_id}", which this process does not have: '
                    f'add it to TEMPORAL_PAYLOAD_DECRYPT_KEYS ("{key_id}:<base64 key>")'
                )
            data = payload.data
            opened.append(Payload.FromString(cipher.decrypt(data[:NONCE_BYTES], data[NONCE_BYTES:], None)))
        return opened


def codec_from_env(env: Mapping[str, str] = os.environ) -> EncryptionCodec | None:
    """The codec the environment asks for, or None when TEMPORAL_PAYLOAD_KEY is unset."""
    raw = env.get("TEMPORAL_PAYLOAD_KEY", "").strip()
    if not raw:
        return None
    decrypt_keys = {}
    for entry in filter(None, (e.strip() for e in env.get("TEMPORAL_PAYLOAD_DECRYPT_KEYS", "").split(","))):
        key_id, _, key = entry.partition(":")
        decrypt_keys[key_id.strip()] = base64.b64decode(key.strip())
    return EncryptionCodec(base64.b64decode(raw), env.get("TEMPORAL_PAYLOAD_KEY_ID", "").strip() or "default", decrypt_keys)


def data_converter_from_env() -> temporalio.converter.DataConverter:
    """The SDK's default converter, encrypting when TEMPORAL_PAYLOAD_KEY is set."""
    codec = codec_from_env()
    default = temporalio.converter.default()
    return dataclasses.replace(default, payload_codec=codec) if codec else default


def _to_json(payloads: list[Payload]) -> dict:
    b64 = lambda raw: base64.b64encode(raw).decode()
    return {"payloads": [{"metadata": {k: b64(v) for k, v in p.metadata.items()}, "data": b64(p.data)} for p in payloads]}


def _from_json(body: dict) -> list[Payload]:
    return [
        Payload(
            metadata={k: base64.b64decode(v) for k, v in p.get("metadata", {}).items()},
            data=base64.b64decode(p.get("data", "")),
        )
        for p in body["payloads"]
    ]


if __name__ == "__main__":
    codec = codec_from_env()
    if codec is None or len(sys.argv) != 2 or sys.argv[1] not in ("encode", "decode"):
        sys.exit("usage: TEMPORAL_PAYLOAD_KEY=... python browserai_codec.py encode|decode < payloads.json")
    payloads = _from_json(json.load(sys.stdin))
    result = asyncio.run(codec.encode(payloads) if sys.argv[1] == "encode" else codec.decode(payloads))
    json.dump(_to_json(result), sys.stdout)
