package testserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/apiserver"
	"kubevirt.dev/virt/apiserver/guestaccess"
)

// Server is a running in-process virt-apiserver.
type Server struct {
	// ClientConfig reaches the server (its serving certificate is
	// self-signed, so TLS verification is off).
	ClientConfig *rest.Config
	// DataDir holds the embedded etcd's data.
	DataDir string

	cancel context.CancelFunc
	done   chan error
}

// Option changes the server's options before it starts.
type Option func(*apiserver.Options)

// WithFrontProxy makes the server trust the front proxy's request headers.
func WithFrontProxy(p *FrontProxy) Option {
	return func(o *apiserver.Options) {
		rh := &o.Recommended.Authentication.RequestHeader
		rh.ClientCAFile = p.caFile
		rh.UsernameHeaders = []string{"X-Remote-User"}
		rh.GroupHeaders = []string{"X-Remote-Group"}
		rh.ExtraHeaderPrefixes = []string{"X-Remote-Extra-"}
	}
}

// WithExternalEtcd stores in the etcd at url instead of an embedded one.
func WithExternalEtcd(url string) Option {
	return func(o *apiserver.Options) {
		o.Recommended.Etcd.StorageConfig.Transport.ServerList = []string{url}
	}
}

// WithGuestAccess reaches the handlers named by resolver (node name to
// host:port) with the client certificates in certDir
// (guestaccesstest.PKI.ClientDir). Without it guest access is off.
func WithGuestAccess(certDir string, resolver guestaccess.Resolver) Option {
	return func(o *apiserver.Options) {
		o.GuestAccess.CertDir = certDir
		o.GuestAccess.Resolver = resolver
	}
}

// Start runs a server on dataDir and waits until it is ready. It is stopped
// when the test ends, unless the test stopped it before.
func Start(t testing.TB, dataDir string, opts ...Option) *Server {
	t.Helper()
	o := apiserver.NewOptions()
	o.Standalone = true
	o.DataDir = dataDir
	for _, opt := range opts {
		opt(o)
	}
	listener, port, err := genericoptions.CreateListener("tcp", "127.0.0.1:0", net.ListenConfig{})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	o.Recommended.SecureServing.Listener = listener
	o.Recommended.SecureServing.BindPort = port
	o.Recommended.SecureServing.ServerCert.CertDirectory = t.TempDir()
	o.EmbeddedEtcd.ClientPort = FreePort(t)
	o.EmbeddedEtcd.PeerPort = FreePort(t)

	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		ClientConfig: &rest.Config{
			Host:            fmt.Sprintf("https://127.0.0.1:%d", port),
			TLSClientConfig: rest.TLSClientConfig{Insecure: true},
			QPS:             1000,
			Burst:           2000,
		},
		DataDir: dataDir,
		cancel:  cancel,
		done:    make(chan error, 1),
	}
	go func() { s.done <- o.Run(ctx) }()
	t.Cleanup(func() { s.Stop(t) })
	if err := s.waitReady(60 * time.Second); err != nil {
		t.Fatalf("virt-apiserver did not become ready: %v", err)
	}
	return s
}

// Stop shuts the server down the way SIGTERM does and waits until it and
// its etcd are gone. Calling it twice is harmless.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("virt-apiserver stopped with an error: %v", err)
		}
	case <-time.After(90 * time.Second):
		t.Errorf("virt-apiserver did not stop within 90s")
	}
}

func (s *Server) waitReady(timeout time.Duration) error {
	client, err := rest.HTTPClientFor(s.ClientConfig)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			return fmt.Errorf("server exited: %w", err)
		default:
		}
		resp, err := client.Get(s.ClientConfig.Host + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/readyz: %s", resp.Status)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return errors.Join(fmt.Errorf("not ready after %v", timeout), last)
}

// FreePort returns a loopback TCP port nothing listens on right now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
