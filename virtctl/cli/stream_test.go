package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/virtctl/cli"
	"kubevirt.dev/virt/virtctl/stream/streamtest"
)

// withConsole serves the console of every VMI: a greeting, then an echo.
func (a *fakeAPI) withConsole() *fakeAPI {
	a.mux.HandleFunc("GET "+group+"/namespaces/{ns}/virtualmachineinstances/{name}/console", func(w http.ResponseWriter, r *http.Request) {
		conn, err := streamtest.Upgrade(w, r)
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = io.WriteString(conn, "login: ")
		_, _ = io.Copy(conn, conn)
	})
	return a
}

// screen is what every VMI's display shows.
func screen() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 6, 4))
	for y := range 4 {
		for x := range 6 {
			img.SetRGBA(x, y, color.RGBA{R: uint8(40 * x), G: uint8(60 * y), B: 90, A: 255})
		}
	}
	return img
}

// withVNC serves the display of every VMI: the stream greets as an RFB
// server and echoes; the screenshot is screen() as PNG, except for the VMI
// "silent", whose screenshot never comes.
func (a *fakeAPI) withVNC() *fakeAPI {
	a.mux.HandleFunc("GET "+group+"/namespaces/{ns}/virtualmachineinstances/{name}/vnc", func(w http.ResponseWriter, r *http.Request) {
		conn, err := streamtest.Upgrade(w, r)
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = io.WriteString(conn, "RFB 003.008\n")
		_, _ = io.Copy(conn, conn)
	})
	a.mux.HandleFunc("GET "+group+"/namespaces/{ns}/virtualmachineinstances/{name}/vnc/screenshot", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") == "silent" {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "image/png")
		_ = png.Encode(w, screen())
	})
	return a
}

// withWatch answers a watch of VMIs with the VMI in each of phases, one
// event each, then holds the watch open.
func (a *fakeAPI) withWatch(phases ...virtv1.VirtualMachineInstancePhase) *fakeAPI {
	a.mux.HandleFunc("GET "+group+"/namespaces/{ns}/virtualmachineinstances", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "true" {
			http.Error(w, "list not faked", http.StatusNotImplemented)
			return
		}
		name := strings.TrimPrefix(r.URL.Query().Get("fieldSelector"), "metadata.name=")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for _, p := range phases {
			a.addVMI(r.PathValue("ns"), name, p)
			a.mu.Lock()
			ev := metav1.WatchEvent{Type: "MODIFIED"}
			ev.Object.Raw, _ = json.Marshal(a.vmis[r.PathValue("ns")+"/"+name])
			a.mu.Unlock()
			_ = json.NewEncoder(w).Encode(&ev)
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	})
	return a
}

func TestConsole(t *testing.T) {
	a := newFakeAPI(t).withConsole()
	a.addVMI("ctx-ns", "vmi-tiny", virtv1.Running)
	in, typing := io.Pipe()
	var out, errOut syncBuffer
	cmd := cli.NewCommand("virtctl", genericiooptions.IOStreams{In: in, Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"--kubeconfig", a.kubeconfig(), "console", "vmi-tiny"})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(t.Context()) }()

	waitFor(t, &out, "login: ")
	_, _ = io.WriteString(typing, "root\r")
	waitFor(t, &out, "login: root\r")
	_, _ = io.WriteString(typing, "\x1d")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("console: %v\n%s", err, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("console did not end at the escape")
	}
	if want := "Successfully connected to vmi-tiny console. The escape sequence is ^]\n"; !strings.HasPrefix(errOut.String(), want) {
		t.Errorf("stderr %q, want it to start with %q", errOut.String(), want)
	}
	if want := "login: root\r"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
}

func waitFor(t *testing.T, b *syncBuffer, want string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return b.String() == want, nil
	})
	if err != nil {
		t.Fatalf("output %q, want %q", b.String(), want)
	}
}

func TestConsoleWaitsForRunning(t *testing.T) {
	a := newFakeAPI(t).withConsole().withWatch(virtv1.Scheduled, virtv1.Running)
	a.addVMI("ctx-ns", "vmi-tiny", virtv1.Scheduling)
	res := a.run(strings.NewReader("\x1d"), "console", "vmi-tiny")
	if res.err != nil {
		t.Fatalf("console: %v\n%s", res.err, res.errOut)
	}
	want := "Waiting for VMI vmi-tiny to be Running: it is Scheduling\n" +
		"Waiting for VMI vmi-tiny to be Running: it is Scheduled\n" +
		"Successfully connected to vmi-tiny console. The escape sequence is ^]\n"
	if !strings.HasPrefix(res.errOut, want) {
		t.Errorf("stderr:\n%s\nwant it to start with:\n%s", res.errOut, want)
	}
}

func TestConsoleErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		phase virtv1.VirtualMachineInstancePhase // "" is no VMI
		args  []string
		want  string
	}{
		{name: "no VMI", args: []string{"console", "vmi-x"}, want: "virtualmachineinstance vmi-x not found in namespace ctx-ns"},
		{name: "ended", phase: virtv1.Failed, args: []string{"console", "vmi-x"}, want: "VMI vmi-x has ended (phase Failed): it has no console any more"},
		{name: "bad timeout", args: []string{"console", "vmi-x", "--timeout=0"}, want: "--timeout must be 1 minute or more, not 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newFakeAPI(t).withConsole()
			if tc.phase != "" {
				a.addVMI("ctx-ns", "vmi-x", tc.phase)
			}
			res := a.run(nil, tc.args...)
			if res.err == nil || res.err.Error() != tc.want {
				t.Errorf("error %v, want %q", res.err, tc.want)
			}
		})
	}
}

func TestVNCProxyOnly(t *testing.T) {
	a := newFakeAPI(t).withVNC()
	a.addVMI("ctx-ns", "vmi-tiny", virtv1.Running)
	outR, outW := io.Pipe()
	var errOut syncBuffer
	cmd := cli.NewCommand("virtctl", genericiooptions.IOStreams{In: strings.NewReader(""), Out: outW, ErrOut: &errOut})
	cmd.SetArgs([]string{"--kubeconfig", a.kubeconfig(), "vnc", "vmi-tiny", "--proxy-only"})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	var printed struct{ Port int }
	if err := json.NewDecoder(outR).Decode(&printed); err != nil || printed.Port == 0 {
		t.Fatalf("stdout: %+v, %v; want {\"port\":N}", printed, err)
	}
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(printed.Port)))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	greeting := make([]byte, 12)
	if _, err := io.ReadFull(c, greeting); err != nil || string(greeting) != "RFB 003.008\n" {
		t.Fatalf("a viewer through the proxy read %q, %v; want the display's greeting", greeting, err)
	}
	c.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("vnc: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("vnc --proxy-only did not stop when interrupted")
	}
	if !strings.Contains(errOut.String(), "connected") {
		t.Errorf("stderr %q, want the viewer's coming and going", errOut.String())
	}
}

func TestVNCNotFound(t *testing.T) {
	a := newFakeAPI(t).withVNC()
	res := a.run(nil, "vnc", "vmi-x", "--proxy-only")
	if want := "virtualmachineinstance vmi-x not found in namespace ctx-ns"; res.err == nil || res.err.Error() != want {
		t.Errorf("error %v, want %q", res.err, want)
	}
	if res.out != "" {
		t.Errorf("stdout %q, want no port for a VMI that does not exist", res.out)
	}
}

func TestVNCScreenshot(t *testing.T) {
	a := newFakeAPI(t).withVNC()
	file := filepath.Join(t.TempDir(), "out.png")
	res := a.run(nil, "vnc", "screenshot", "vmi-tiny", "--file", file)
	if res.err != nil {
		t.Fatalf("screenshot: %v", res.err)
	}
	if want := "Screenshot of vmi-tiny (6x4) written to " + file + "\n"; res.errOut != want {
		t.Errorf("stderr %q, want %q", res.errOut, want)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	samePNG(t, b)

	res = a.run(nil, "vnc", "screenshot", "vmi-tiny", "-f", "-")
	if res.err != nil {
		t.Fatalf("screenshot to stdout: %v", res.err)
	}
	samePNG(t, []byte(res.out))

	if res := a.run(nil, "vnc", "screenshot", "vmi-tiny"); res.err == nil || !strings.Contains(res.err.Error(), "--file") {
		t.Errorf("without --file: %v, want a word about --file", res.err)
	}
	if last := a.last(); last.Path != group+"/namespaces/ctx-ns/virtualmachineinstances/vmi-tiny/vnc/screenshot" {
		t.Errorf("asked %s, want the VMI's vnc/screenshot", last.Path)
	}
	res = a.run(nil, "vnc", "screenshot", "silent", "-f", file, "--timeout", "100ms")
	if want := "no picture of the display of silent within 100ms (--timeout waits longer)"; res.err == nil || res.err.Error() != want {
		t.Errorf("a display that never speaks: %v, want %q", res.err, want)
	}
}

func samePNG(t *testing.T, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	samePicture(t, img)
}

func samePicture(t *testing.T, img image.Image) {
	t.Helper()
	want := screen()
	if img.Bounds() != want.Bounds() {
		t.Fatalf("picture %v, want %v", img.Bounds(), want.Bounds())
	}
	for y := range 4 {
		for x := range 6 {
			if got := color.RGBAModel.Convert(img.At(x, y)); got != want.RGBAAt(x, y) {
				t.Fatalf("pixel %d,%d: %v, want %v", x, y, got, want.RGBAAt(x, y))
			}
		}
	}
}
