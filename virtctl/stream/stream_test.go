package stream_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/json"

	"kubevirt.dev/virt/virtctl/stream"
	"kubevirt.dev/virt/virtctl/stream/streamtest"
)

const consolePath = "/apis/virtualization.kubevirt.io/v1/namespaces/ns1/virtualmachineinstances/vmi1/console"

// echo upgrades requests for consolePath and sends back what it reads.
func echo(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != consolePath {
			t.Errorf("path %s, want %s", r.URL.Path, consolePath)
			http.NotFound(w, r)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer secret" {
			t.Errorf("Authorization %q, want the config's bearer token", got)
		}
		conn, err := streamtest.Upgrade(w, r)
		if err != nil {
			t.Errorf("upgrade: %v", err)
			return
		}
		defer conn.Close()
		_, _ = io.Copy(conn, conn)
	}
}

func TestDialEchoes(t *testing.T) {
	for _, tlsServer := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[tlsServer], func(t *testing.T) {
			var srv *httptest.Server
			if tlsServer {
				srv = httptest.NewTLSServer(echo(t))
			} else {
				srv = httptest.NewServer(echo(t))
			}
			defer srv.Close()
			cfg := streamtest.Config(srv)
			cfg.BearerToken = "secret"

			conn, err := stream.Dial(t.Context(), cfg, "ns1", "vmi1", "console")
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer conn.Close()
			for _, msg := range []string{"hello", "\x00\x1b[A binary \xff"} {
				if _, err := conn.Write([]byte(msg)); err != nil {
					t.Fatalf("Write: %v", err)
				}
				got := make([]byte, len(msg))
				if _, err := io.ReadFull(conn, got); err != nil {
					t.Fatalf("Read: %v", err)
				}
				if string(got) != msg {
					t.Errorf("read %q, want %q", got, msg)
				}
			}
		})
	}
}

func TestDialReturnsTheServersStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := apierrors.NewNotFound(schema.GroupResource{Group: "virtualization.kubevirt.io", Resource: "virtualmachineinstances"}, "vmi1").ErrStatus
		status.APIVersion, status.Kind = "v1", "Status"
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(&status)
	}))
	defer srv.Close()

	_, err := stream.Dial(t.Context(), streamtest.Config(srv), "ns1", "vmi1", "console")
	if !apierrors.IsNotFound(err) {
		t.Fatalf("Dial: %v, want a NotFound StatusError in the chain", err)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details.Name != "vmi1" {
		t.Errorf("Dial: %#v, want the server's details", err)
	}
}

func TestReadEndsWithTheServersReason(t *testing.T) {
	for _, tc := range []struct {
		reason string
		want   string // "" is io.EOF
	}{
		{reason: "another console connection took over", want: "the server closed the stream: another console connection took over"},
		{reason: "", want: ""},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.reason == "" {
					conn, err := streamtest.Upgrade(w, r)
					if err == nil {
						_, _ = conn.Write([]byte("bye"))
						conn.Close()
					}
					return
				}
				if err := streamtest.CloseWith(w, r, tc.reason); err != nil {
					t.Errorf("close: %v", err)
				}
			}))
			defer srv.Close()
			conn, err := stream.Dial(t.Context(), streamtest.Config(srv), "ns1", "vmi1", "console")
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer conn.Close()
			b, err := io.ReadAll(conn)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("ReadAll: %v, want EOF after %q", err, b)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("ReadAll: %v, want %q", err, tc.want)
			}
			var closed *stream.ClosedError
			if tc.want != "" && !errors.As(err, &closed) {
				t.Errorf("ReadAll: %T, want a *stream.ClosedError", err)
			}
		})
	}
}

func TestDialNamesTheServerItCannotReach(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	cfg := streamtest.Config(srv)
	srv.Close()
	_, err := stream.Dial(t.Context(), cfg, "ns1", "vmi1", "console")
	if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(srv.URL, "http://")) {
		t.Errorf("Dial: %v, want an error naming %s", err, srv.URL)
	}
}
