package network

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Bounds of one transfer.
const (
	// downloadTimeout bounds one download of the big file: 64 MiB at
	// 1 MB/s, far below anything either path does.
	downloadTimeout = 2 * time.Minute
	// requestTimeout bounds one small request.
	requestTimeout = 10 * time.Second
	// readBuffer is the download's read size: large reads keep the
	// client's own CPU per byte low on a 2-core machine.
	readBuffer = 1 << 20
)

// download GETs url on a fresh connection and reads the body to its end;
// it returns the time from the request to the last byte. The body must be
// want bytes long.
func download(ctx context.Context, url string, want int64) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	// A transport per download: a fresh connection every time, no proxy
	// from the environment, the body as the guest sends it.
	tr := &http.Transport{DisableKeepAlives: true, DisableCompression: true, Proxy: nil}
	defer tr.CloseIdleConnections()
	start := time.Now()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	var n int64
	buf := make([]byte, readBuffer)
	for {
		k, err := resp.Body.Read(buf)
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("GET %s: after %d bytes: %w", url, n, err)
		}
	}
	d := time.Since(start)
	if n != want {
		return 0, fmt.Errorf("GET %s: %d bytes, want %d", url, n, want)
	}
	return d, nil
}

// request times one small HTTP/1.0 GET of / on a fresh connection to addr
// (host:port): connect, send, and read the response until the server
// closes the connection. The answer must be a 200.
func request(ctx context.Context, addr string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	msg := []byte("GET / HTTP/1.0\r\nHost: " + host + "\r\n\r\n")
	var d net.Dialer
	start := time.Now()
	conn, err := d.DialContext(ctx, "tcp4", addr)
	if err != nil {
		return 0, fmt.Errorf("connect to %s: %w", addr, err)
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	if _, err := conn.Write(msg); err != nil {
		return 0, fmt.Errorf("send to %s: %w", addr, err)
	}
	resp, err := io.ReadAll(conn)
	elapsed := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("read from %s: %w", addr, err)
	}
	if !ok200(resp) {
		line, _, _ := bytes.Cut(resp, []byte("\r\n"))
		return 0, fmt.Errorf("GET / from %s: answered %q", addr, line)
	}
	return elapsed, nil
}

// ok200 says whether an HTTP response starts with a 200 status line.
func ok200(resp []byte) bool {
	line, _, _ := bytes.Cut(resp, []byte("\r\n"))
	version, rest, _ := bytes.Cut(line, []byte(" "))
	code, _, _ := bytes.Cut(rest, []byte(" "))
	return bytes.HasPrefix(version, []byte("HTTP/1.")) && string(code) == "200"
}
