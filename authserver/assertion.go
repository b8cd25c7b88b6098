package authserver

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// AssertionType is the client_assertion_type of a private_key_jwt client
// (RFC 7523 §2.2).
const AssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// verifyAssertion checks a private_key_jwt client assertion (RFC 7523 §3):
// an ES256 or RS256 JWT signed by the client's key, iss and sub its
// client_id, aud this server's issuer or token endpoint, not expired. It
// returns the client.
func (s *Server) verifyAssertion(jwt string) (*Client, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return nil, errors.New("the client assertion is not a JWS compact serialization")
	}
	dec := base64.RawURLEncoding
	var header struct {
		Alg string `json:"alg"`
	}
	var claims struct {
		Iss, Sub, Jti string
		Aud           json.RawMessage
		Exp           int64
	}
	hb, err1 := dec.DecodeString(parts[0])
	cb, err2 := dec.DecodeString(parts[1])
	sig, err3 := dec.DecodeString(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("the client assertion does not decode: %w", err)
	}
	if json.Unmarshal(hb, &header) != nil || json.Unmarshal(cb, &claims) != nil {
		return nil, errors.New("the client assertion's header or claims are not JSON objects")
	}
	s.mu.Lock()
	c := s.clients[claims.Sub]
	s.mu.Unlock()
	switch {
	case claims.Iss == "" || claims.Iss != claims.Sub:
		return nil, errors.New("the client assertion's iss and sub must both be the client_id")
	case c == nil || c.PublicKey == nil:
		return nil, fmt.Errorf("client %s has no registered key", strconvQuote(claims.Sub))
	case claims.Exp == 0 || time.Unix(claims.Exp, 0).Before(s.opts.Now()):
		return nil, errors.New("the client assertion expired (or has no exp)")
	case !audienceOK(claims.Aud, s.opts.Issuer, s.opts.Issuer+PathToken):
		return nil, errors.New("the client assertion's aud is neither the issuer nor the token endpoint")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch k := c.PublicKey.(type) {
	case *ecdsa.PublicKey:
		if header.Alg != "ES256" || len(sig) != 64 {
			return nil, fmt.Errorf("client %s signs ES256; the assertion says %s", c.ID, header.Alg)
		}
		if !ecdsa.Verify(k, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			return nil, errors.New("the client assertion's signature does not verify")
		}
	case *rsa.PublicKey:
		if header.Alg != "RS256" || rsa.VerifyPKCS1v15(k, crypto.SHA256, digest[:], sig) != nil {
			return nil, errors.New("the client assertion's RS256 signature does not verify")
		}
	default:
		return nil, fmt.Errorf("client %s: a %T key is not supported", c.ID, c.PublicKey)
	}
	return c, nil
}

// audienceOK reports whether aud (a string or an array) names one of want.
func audienceOK(aud json.RawMessage, want ...string) bool {
	var one string
	if json.Unmarshal(aud, &one) == nil {
		return slices.Contains(want, one)
	}
	var many []string
	if json.Unmarshal(aud, &many) == nil {
		for _, a := range many {
			if slices.Contains(want, a) {
				return true
			}
		}
	}
	return false
}
