package guestaccess

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// get sends a GET as virt-apiserver.
func (f *fixture) get(url string) *http.Response {
	f.t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: f.clientTLS(f.client)}, Timeout: 30 * time.Second}
	f.t.Cleanup(client.CloseIdleConnections)
	req, err := http.NewRequestWithContext(f.t.Context(), http.MethodGet, url, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestScreenshot(t *testing.T) {
	f := newFixture(t)
	g := f.addVMI("vm", virtv1.Running)
	fake, _ := f.launch(g)
	headless := f.addVMI("headless", virtv1.Running)
	headless.vmi.Spec.Domain.Devices.AutoattachGraphicsDevice = ptr.To(false)
	url := f.url("https", "ns", "vm", "vnc/screenshot", string(g.vmi.UID))

	t.Run("a launcher without the RPC", func(t *testing.T) {
		st := decodeStatus(t, f.get(url))
		if st.Code != http.StatusNotImplemented || !strings.Contains(st.Message, "too old for screenshot") {
			t.Errorf("answered %+v, want 501 too old", st)
		}
	})
	t.Run("the PNG, in the launcher's chunks", func(t *testing.T) {
		fake.SetScreenshot([]*apiv1.ScreenshotChunk{
			{Width: 2, Height: 1, Png: []byte("\x89PNG")}, {Png: []byte(" rest")},
		}, nil)
		resp := f.get(url)
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(body, []byte("\x89PNG rest")) {
			t.Fatalf("answered %d %q, %v", resp.StatusCode, body, err)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "image/png" {
			t.Errorf("Content-Type %q", ct)
		}
	})
	t.Run("a launcher that sends too much is cut off", func(t *testing.T) {
		defer func(max int) { maxScreenshotBytes = max }(maxScreenshotBytes)
		maxScreenshotBytes = 8
		fake.SetScreenshot([]*apiv1.ScreenshotChunk{
			{Width: 2, Height: 1, Png: []byte("\x89PNG")}, {Png: []byte(" and more")},
		}, nil)
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: f.clientTLS(f.client)}, Timeout: 30 * time.Second}
		defer client.CloseIdleConnections()
		resp, err := client.Get(url)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err == nil {
			t.Errorf("13 bytes passed on, the cap is 8 (HTTP %d)", resp.StatusCode)
		}
	})
	t.Run("a stream that breaks is no picture", func(t *testing.T) {
		fake.SetScreenshot([]*apiv1.ScreenshotChunk{{Width: 2, Height: 1, Png: []byte("\x89PNG")}},
			status.Error(codes.Internal, "libvirt went away"))
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: f.clientTLS(f.client)}, Timeout: 30 * time.Second}
		defer client.CloseIdleConnections()
		resp, err := client.Get(url)
		if err == nil {
			// The headers may have gone out before the break: then the
			// body must not end cleanly.
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err == nil {
			t.Errorf("a cut picture read as whole (HTTP %d)", resp.StatusCode)
		}
	})
	for _, tc := range []struct {
		name    string
		err     error
		want    int32
		wantMsg string
	}{
		{"a guest screen beyond the cap", status.Error(codes.ResourceExhausted, "7680x4320 is more than 8294400 pixels"), http.StatusConflict, "7680x4320"},
		{"no screen in the domain", status.Error(codes.FailedPrecondition, "no screens to take screenshot from"), http.StatusConflict, "no screens"},
		{"the launcher busy", status.Error(codes.Unavailable, "connection refused"), http.StatusServiceUnavailable, "not answering"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake.SetScreenshot(nil, tc.err)
			st := decodeStatus(t, f.get(url))
			if st.Code != tc.want || !strings.Contains(st.Message, tc.wantMsg) {
				t.Errorf("answered %+v, want %d %q", st, tc.want, tc.wantMsg)
			}
		})
	}
	t.Run("a VMI without graphics", func(t *testing.T) {
		calls := fake.Calls().Screenshot
		st := decodeStatus(t, f.get(f.url("https", "ns", "headless", "vnc/screenshot", "headless-uid")))
		if st.Code != http.StatusBadRequest || !strings.Contains(st.Message, "no graphics device") {
			t.Errorf("answered %+v, want 400", st)
		}
		if fake.Calls().Screenshot != calls {
			t.Error("the launcher was asked")
		}
	})
	t.Run("another VMI's UID", func(t *testing.T) {
		if st := decodeStatus(t, f.get(f.url("https", "ns", "vm", "vnc/screenshot", "old-uid"))); st.Code != http.StatusNotFound {
			t.Errorf("answered %+v, want 404", st)
		}
	})
}
