package network

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// guestHTTPD answers like the test guest's busybox httpd: a page on / and
// size bytes of zeros on /big; it counts the connections it accepted.
func guestHTTPD(t *testing.T, size int) (srv *httptest.Server, conns *atomic.Int64) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("<h1>net</h1>\nVIRT-GUEST-HTTP net\n"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(make([]byte, size))
	})
	srv = httptest.NewUnstartedServer(mux)
	conns = &atomic.Int64{}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, conns
}

func TestDownload(t *testing.T) {
	const size = 3<<20 + 17
	srv, conns := guestHTTPD(t, size)
	for range 3 {
		d, err := download(t.Context(), srv.URL+"/big", size)
		if err != nil {
			t.Fatal(err)
		}
		if d <= 0 {
			t.Errorf("download took %s", d)
		}
	}
	if got := conns.Load(); got != 3 {
		t.Errorf("3 downloads used %d connections, want a fresh one each", got)
	}
}

func TestDownloadErrors(t *testing.T) {
	srv, _ := guestHTTPD(t, 1000)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		name, url string
		want      int64
		err       string
	}{
		{"short body", srv.URL + "/big", 1001, "1000 bytes, want 1001"},
		{"not found", srv.URL + "/missing", 1000, "404 Not Found"},
		{"nothing listens", closed.URL + "/big", 1000, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := download(t.Context(), tc.url, tc.want)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want one saying %q", err, tc.err)
			}
		})
	}
}

func TestRequest(t *testing.T) {
	srv, conns := guestHTTPD(t, 0)
	addr := srv.Listener.Addr().String()
	for range 5 {
		d, err := request(t.Context(), addr)
		if err != nil {
			t.Fatal(err)
		}
		if d <= 0 {
			t.Errorf("request took %s", d)
		}
	}
	if got := conns.Load(); got != 5 {
		t.Errorf("5 requests used %d connections, want a fresh one each", got)
	}
}

func TestRequestErrors(t *testing.T) {
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct{ name, addr, err string }{
		{"not a 200", notFound.Listener.Addr().String(), `answered "HTTP/1.0 404 Not Found"`},
		{"nothing listens", closed.Listener.Addr().String(), "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := request(t.Context(), tc.addr)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want one saying %q", err, tc.err)
			}
		})
	}
}

func TestOK200(t *testing.T) {
	for _, tc := range []struct {
		resp string
		want bool
	}{
		{"HTTP/1.0 200 OK\r\nContent-type: text/html\r\n\r\nhi", true},
		{"HTTP/1.1 200 OK\r\n\r\n", true},
		{"HTTP/1.0 404 Not Found\r\n\r\n", false},
		{"HTTP/1.0 2000 Nonsense\r\n\r\n", false},
		{"HTTP/1.0 200\r\n\r\n", true},
		{"", false},
		{"200 OK", false},
	} {
		if got := ok200([]byte(tc.resp)); got != tc.want {
			t.Errorf("ok200(%q) = %v, want %v", tc.resp, got, tc.want)
		}
	}
}
