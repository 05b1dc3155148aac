package github_test

import (
	"crypto/tls"
	"crypto/x509"
)

func newTLSConfig(pool *x509.CertPool) *tls.Config {
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}
