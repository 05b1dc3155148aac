package githubtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"sync"
	"time"
)

// tlsProxy is what EnableTLS adds: a CA, a certificate per host on demand, and an
// http.Server that serves the TLS connections opened through CONNECT.
type tlsProxy struct {
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPEM  []byte

	mu    sync.Mutex
	certs map[string]*tls.Certificate

	ln  *chanListener
	srv *http.Server
}

// EnableTLS makes the server answer CONNECT like an HTTPS proxy and serve the tunnelled
// TLS with a certificate for whatever host the client asked for, signed by the fake's
// own CA. It returns the CA certificate (PEM), for SSL_CERT_FILE or a test's cert pool.
func (s *Server) EnableTLS() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tls != nil {
		return s.tls.caPEM, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "githubtest CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	t := &tlsProxy{caCert: ca, caKey: key, certs: map[string]*tls.Certificate{},
		caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		ln:    &chanListener{ch: make(chan net.Conn), done: make(chan struct{})}}
	t.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = t.srv.Serve(t.ln) }()
	s.tls = t
	return t.caPEM, nil
}

func (t *tlsProxy) cert(host string) (*tls.Certificate, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.certs[host]; c != nil {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(int64(len(t.certs) + 2)),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, t.caCert, &key.PublicKey, t.caKey)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	t.certs[host] = c
	return c, nil
}

func (t *tlsProxy) close() {
	_ = t.srv.Close()
	t.ln.Close()
}

// connect answers CONNECT host:port: 200, then TLS on the hijacked connection.
func (s *Server) connect(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	t := s.tls
	s.mu.Unlock()
	if t == nil {
		http.Error(w, "this fake GitHub serves HTTPS only after EnableTLS", http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "cannot hijack", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	if _, err := buf.WriteString("HTTP/1.1 200 Connection established\r\n\r\n"); err != nil || buf.Flush() != nil {
		conn.Close()
		return
	}
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	tc := tls.Server(conn, &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			name := hello.ServerName
			if name == "" {
				name = host
			}
			return t.cert(name)
		},
	})
	select {
	case t.ln.ch <- tc:
	case <-t.ln.done:
		conn.Close()
	}
}

// chanListener is a net.Listener fed with connections by connect.
type chanListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, errors.New("closed")
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
