package client

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// assertionType is RFC 7523 §2.2's client_assertion_type.
const assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// ParseClientKey reads a PEM private key (PKCS #8, or SEC 1 "EC PRIVATE
// KEY", or PKCS #1 "RSA PRIVATE KEY") for private_key_jwt.
func ParseClientKey(pemBytes []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", block.Type, err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, errors.New("an EC key must be on P-256 (ES256)")
		}
		return k, nil
	case *rsa.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("a %T key: want EC P-256 or RSA", key)
}

// clientAssertion signs the private_key_jwt assertion of RFC 7523 §3: iss
// and sub the client id, aud the authorization server's issuer, a short
// expiry and a fresh jti.
func clientAssertion(key crypto.Signer, alg, clientID, audience string) (string, error) {
	if key == nil {
		return "", errors.New("no private key")
	}
	switch key.(type) {
	case *ecdsa.PrivateKey:
		if alg == "" {
			alg = "ES256"
		}
	case *rsa.PrivateKey:
		if alg == "" {
			alg = "RS256"
		}
	}
	if alg != "ES256" && alg != "RS256" {
		return "", fmt.Errorf("signing algorithm %s: mcpdiag signs ES256 and RS256", alg)
	}
	jti := make([]byte, 16)
	_, _ = rand.Read(jti)
	now := time.Now()
	header, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"iss": clientID, "sub": clientID, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"jti": base64.RawURLEncoding.EncodeToString(jti),
	})
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signing))
	var sig []byte
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if alg != "ES256" {
			return "", fmt.Errorf("an EC key signs ES256, not %s", alg)
		}
		r, s, err := ecdsa.Sign(rand.Reader, k, digest[:])
		if err != nil {
			return "", err
		}
		// JWS (RFC 7518 §3.4): R and S as 32-byte big-endian, concatenated.
		sig = append(pad32(r), pad32(s)...)
	case *rsa.PrivateKey:
		if alg != "RS256" {
			return "", fmt.Errorf("an RSA key signs RS256, not %s", alg)
		}
		var err error
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:])
		if err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("a %T key: want EC P-256 or RSA", key)
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

func pad32(n *big.Int) []byte {
	b := n.Bytes()
	out := make([]byte, 32)
	copy(out[32-len(b):], b)
	return out
}
