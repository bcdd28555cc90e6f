package network

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Downloads and requests alternate between the targets, the first target
// of each round rotating, after untimed warm-ups of each.
func TestMeasureAlternates(t *testing.T) {
	const size = 1 << 20
	var mu sync.Mutex
	var log []string
	server := func(name string) target {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			log = append(log, name+r.URL.Path)
			mu.Unlock()
			if r.URL.Path == "/big" {
				_, _ = w.Write(make([]byte, size))
			}
		}))
		t.Cleanup(srv.Close)
		return target{path: name, addr: srv.Listener.Addr().String()}
	}
	a, b := server("a"), server("b")
	res, err := measure(t.Context(), []target{a, b}, 3, 4, size)
	if err != nil {
		t.Fatal(err)
	}
	warmup := func(name string) []string {
		w := slices.Repeat([]string{name + "/big"}, WarmupDownloads)
		return append(w, slices.Repeat([]string{name + "/"}, WarmupRequests)...)
	}
	want := slices.Concat(warmup("a"), warmup("b"),
		strings.Fields("a/big b/big b/big a/big a/big b/big"),
		strings.Fields("a/ b/ b/ a/ a/ b/ b/ a/"))
	if !slices.Equal(log, want) {
		t.Errorf("order of requests:\n got %v\nwant %v", log, want)
	}
	for _, name := range []string{"a", "b"} {
		r, ok := res.Row(name)
		if !ok || len(r.MBps) != 3 || r.Requests != 4 || r.MinMBps <= 0 || r.P50 <= 0 {
			t.Errorf("row %s = %+v, want 3 downloads and 4 requests", name, r)
		}
	}
	if res.FileBytes != size || res.Downloads != 3 || res.Requests != 4 {
		t.Errorf("result = %+v", res)
	}
}

// A failed transfer fails the measurement and names the path.
func TestMeasureFails(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	_, err := measure(t.Context(), []target{{path: "gone", addr: srv.Listener.Addr().String()}}, 1, 1, 10)
	if err == nil || !strings.Contains(err.Error(), "gone, warm-up") {
		t.Fatalf("err = %v, want the warm-up of gone to fail", err)
	}
}

func TestRotate(t *testing.T) {
	ts := []target{{path: "a"}, {path: "b"}, {path: "c"}}
	for i, want := range []string{"abc", "bca", "cab", "abc"} {
		var got string
		for _, x := range rotate(ts, i) {
			got += x.path
		}
		if got != want {
			t.Errorf("rotate(%d) = %s, want %s", i, got, want)
		}
	}
	if got := rotate(nil, 1); got != nil {
		t.Errorf("rotate(nil) = %v", got)
	}
}
