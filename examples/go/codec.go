package main

// Payload encryption that reads and writes what browserai-temporal's workers and clients do: the
// format of Temporal's encryption samples (AES-256-GCM over the serialized Payload, a 12-byte
// nonce before the ciphertext and the tag after it, metadata `encoding: binary/encrypted` and
// `encryption-key-id`), from the same environment as our worker: TEMPORAL_PAYLOAD_KEY (base64 of
// 32 bytes), TEMPORAL_PAYLOAD_KEY_ID (default `default`), TEMPORAL_PAYLOAD_DECRYPT_KEYS
// (`id:base64,...`: earlier keys that still decrypt).

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

const (
	encryptedEncoding = "binary/encrypted"
	keyIDMetadata     = "encryption-key-id"
)

type EncryptionCodec struct {
	keyID string
	aeads map[string]cipher.AEAD
}

func NewEncryptionCodec(key []byte, keyID string, decryptKeys map[string][]byte) (*EncryptionCodec, error) {
	codec := &EncryptionCodec{keyID: keyID, aeads: map[string]cipher.AEAD{}}
	all := map[string][]byte{keyID: key}
	for id, k := range decryptKeys {
		all[id] = k
	}
	for id, k := range all {
		if len(k) != 32 {
			return nil, fmt.Errorf("payload key %q must be 32 bytes (base64 of 32 random bytes): openssl rand -base64 32", id)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		if codec.aeads[id], err = cipher.NewGCM(block); err != nil {
			return nil, err
		}
	}
	return codec, nil
}

func (c *EncryptionCodec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	aead := c.aeads[c.keyID]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{"encoding": []byte(encryptedEncoding), keyIDMetadata: []byte(c.keyID)},
			Data:     aead.Seal(nonce, nonce, plain, nil),
		}
	}
	return out, nil
}

func (c *EncryptionCodec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()["encoding"]) != encryptedEncoding {
			out[i] = p
			continue
		}
		keyID := string(p.GetMetadata()[keyIDMetadata])
		aead, ok := c.aeads[keyID]
		if !ok {
			return nil, fmt.Errorf("payload encrypted with key id %q, which this process does not have: add it to TEMPORAL_PAYLOAD_DECRYPT_KEYS (%q)", keyID, keyID+":<base64 key>")
		}
		data := p.GetData()
		if len(data) < aead.NonceSize()+aead.Overhead() {
			return nil, fmt.Errorf("encrypted payload (key id %q) is truncated", keyID)
		}
		plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], nil)
		if err != nil {
			return nil, fmt.Errorf("payload with key id %q does not decrypt with this key: %w", keyID, err)
		}
		out[i] = &commonpb.Payload{}
		if err := proto.Unmarshal(plain, out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DataConverterFromEnv is the SDK's default converter, encrypting when TEMPORAL_PAYLOAD_KEY is set.
func DataConverterFromEnv() (converter.DataConverter, error) {
	raw := strings.TrimSpace(os.Getenv("TEMPORAL_PAYLOAD_KEY"))
	if raw == "" {
		return converter.GetDefaultDataConverter(), nil
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, fmt.Errorf("TEMPORAL_PAYLOAD_KEY: %w", err)
	}
	keyID := strings.TrimSpace(os.Getenv("TEMPORAL_PAYLOAD_KEY_ID"))
	if keyID == "" {
		keyID = "default"
	}
	decryptKeys := map[string][]byte{}
	for _, entry := range strings.Split(os.Getenv("TEMPORAL_PAYLOAD_DECRYPT_KEYS"), ",") {
		id, encoded, found := strings.Cut(strings.TrimSpace(entry), ":")
		if !found {
			continue
		}
		if decryptKeys[strings.TrimSpace(id)], err = base64.StdEncoding.DecodeString(strings.TrimSpace(encoded)); err != nil {
			return nil, fmt.Errorf("TEMPORAL_PAYLOAD_DECRYPT_KEYS %q: %w", id, err)
		}
	}
	codec, err := NewEncryptionCodec(key, keyID, decryptKeys)
	if err != nil {
		return nil, err
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), codec), nil
}
