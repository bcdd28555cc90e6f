package guestaccess

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubevirt.dev/virt/internal/testpki"
)

func TestOnlyVirtAPIServerGetsThrough(t *testing.T) {
	f := newFixture(t)
	other := testpki.NewCA(t, "another-ca")
	tests := []struct {
		name string
		tls  *tls.Config
		// refused is the TLS alert the client gets, "" when let through.
		refused string
	}{
		{name: "virt-apiserver's certificate", tls: f.clientTLS(f.client)},
		{name: "no client certificate", tls: f.clientTLS(), refused: "certificate required"},
		{name: "signed by another CA", tls: f.clientTLS(other.Issue(t, DefaultClientName, x509.ExtKeyUsageClientAuth)), refused: "unknown certificate authority"},
		{name: "the right CA, another name", tls: f.clientTLS(f.ca.Issue(t, "virt-controller", x509.ExtKeyUsageClientAuth)), refused: "bad certificate"},
		// Every handler holds one: a node must not reach another's guests.
		{name: "a handler's serving certificate", tls: f.clientTLS(f.servingCA.Issue(t, "node-2", x509.ExtKeyUsageServerAuth, "node-2")), refused: "unknown certificate authority"},
		{name: "the client's name from the handlers' signer", tls: f.clientTLS(f.servingCA.Issue(t, DefaultClientName, x509.ExtKeyUsageClientAuth)), refused: "unknown certificate authority"},
		{name: "a serving certificate of the client CA", tls: f.clientTLS(f.ca.Issue(t, "virt-handler", x509.ExtKeyUsageServerAuth, "virt-handler")), refused: "bad certificate"},
		{name: "the client's name on a serving certificate", tls: f.clientTLS(f.ca.Issue(t, DefaultClientName, x509.ExtKeyUsageServerAuth)), refused: "bad certificate"},
		{name: "TLS 1.1", tls: func() *tls.Config {
			c := f.clientTLS(f.client)
			c.MinVersion, c.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
			return c
		}(), refused: "protocol version not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: tt.tls}, Timeout: 10 * time.Second}
			defer client.CloseIdleConnections()
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, f.url("https", "ns", "missing", "pause", "uid"), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if tt.refused != "" {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("request answered %s, want the handshake refused", resp.Status)
				}
				if !strings.Contains(err.Error(), tt.refused) {
					t.Errorf("request failed with %v, want %q", err, tt.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("request failed: %v", err)
			}
			defer resp.Body.Close()
			// Through: the VMI is unknown.
			if st := decodeStatus(t, resp); st.Code != http.StatusNotFound {
				t.Errorf("answer = %+v, want 404 for an unknown VMI", st)
			}
		})
	}
}

// The handler refuses another client even when served with a TLS
// configuration that only checks the CA.
func TestHandlerChecksTheClientName(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewUnstartedServer(f.server.Handler())
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: f.ca.Pool(),
		Certificates: []tls.Certificate{f.servingCA.Issue(t, nodeName, x509.ExtKeyUsageServerAuth, nodeName)}}
	srv.StartTLS()
	defer srv.Close()
	for _, tt := range []struct {
		name string
		cert tls.Certificate
		want int
	}{
		{"virt-apiserver", f.client, http.StatusNotFound},
		{"virt-controller", f.ca.Issue(t, "virt-controller", x509.ExtKeyUsageClientAuth), http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: f.clientTLS(tt.cert)}, Timeout: 10 * time.Second}
			defer client.CloseIdleConnections()
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut,
				"https://"+srv.Listener.Addr().String()+"/v1/namespaces/ns/virtualmachineinstances/x/pause?uid=u", nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if st := decodeStatus(t, resp); int(st.Code) != tt.want {
				t.Errorf("answer = %+v, want %d", st, tt.want)
			}
		})
	}
}

func TestLoadTLSConfigReportsMissingFiles(t *testing.T) {
	if _, err := LoadTLSConfig(filepath.Join(t.TempDir(), "ca.crt"), func() *tls.Certificate { return nil }, DefaultClientName); err == nil {
		t.Error("LoadTLSConfig of a missing CA file succeeded")
	}
}
