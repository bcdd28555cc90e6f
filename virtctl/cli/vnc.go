package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"kubevirt.dev/virt/virtctl/vnc"
)

// VNCOptions is `vnc VMI`.
type VNCOptions struct {
	target
	// ProxyOnly: serve viewers on Address:Port and print the port as
	// JSON, without starting a viewer.
	ProxyOnly bool
	Address   string
	Port      int
	genericiooptions.IOStreams
}

func newVNCCommand(name string, f genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &VNCOptions{Address: "127.0.0.1", IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "vnc VMI",
		Short: "Open the display of a virtual machine instance in a VNC viewer",
		Long: "Open the display of a virtual machine instance: listen on a local port, start a VNC viewer\n" +
			"(remote-viewer or vncviewer) on it, and carry each of its connections to the VMI over a\n" +
			"WebSocket of its own. With --proxy-only, start no viewer: print the port as JSON\n" +
			"({\"port\":N}) and serve any viewer until interrupted.",
		Example: examples(name,
			"Open the example VM's screen in remote-viewer or vncviewer", "vnc vmi-tiny",
			"Serve it on port 5900 for a viewer of your choice", "vnc vmi-tiny --proxy-only --port 5900",
			"Save a picture of it", "vnc screenshot vmi-tiny --file vmi-tiny.png"),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(f, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&o.ProxyOnly, "proxy-only", false, "start no viewer: print the local port as JSON and serve viewers until interrupted")
	cmd.Flags().IntVar(&o.Port, "port", 0, "local port to listen on (0: any free port)")
	cmd.Flags().StringVar(&o.Address, "address", o.Address, "local address to listen on")
	cmd.AddCommand(newScreenshotCommand(name, f, streams))
	return cmd
}

// Complete reads the kubeconfig flags and the VMI's name.
func (o *VNCOptions) Complete(f genericclioptions.RESTClientGetter, args []string) error {
	return o.complete(f, args[0])
}

// Validate checks the flags.
func (o *VNCOptions) Validate() error {
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("--port %d is not a TCP port", o.Port)
	}
	if net.ParseIP(o.Address) == nil && o.Address != "localhost" {
		return fmt.Errorf("--address %q is not an IP address", o.Address)
	}
	return o.validate("VMI")
}

// Run checks that the VMI exists, listens, and serves viewers until ctx
// ends or the viewer it started exits.
func (o *VNCOptions) Run(ctx context.Context) error {
	vmis := o.Client.VirtualizationV1().VirtualMachineInstances(o.Namespace)
	if _, err := vmis.Get(ctx, o.Name, metav1.GetOptions{}); err != nil {
		return o.explain("get", vmiResource, "", err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(o.Address, strconv.Itoa(o.Port)))
	if err != nil {
		return fmt.Errorf("listen for VNC viewers: %w", err)
	}
	addr := l.Addr().(*net.TCPAddr)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	if o.ProxyOnly {
		if err := json.NewEncoder(o.Out).Encode(map[string]int{"port": addr.Port}); err != nil {
			l.Close()
			return err
		}
		fmt.Fprintf(o.ErrOut, "Serving the display of %s on %s for any VNC viewer; Ctrl+C stops\n", o.Name, addr)
	} else if viewer := findViewer(addr, o.ErrOut); viewer != nil {
		fmt.Fprintf(o.ErrOut, "Serving the display of %s on %s; starting %s\n", o.Name, addr, viewer.Path)
		if err := viewer.Start(); err != nil {
			l.Close()
			return fmt.Errorf("start %s: %w", viewer.Path, err)
		}
		go func() {
			_ = viewer.Wait()
			cancel() // the viewer closed: so does the proxy
		}()
	} else {
		fmt.Fprintf(o.ErrOut, "No VNC viewer found (looked for %s on the PATH): connect one to %s; Ctrl+C stops\n",
			viewerNames(), addr)
	}

	p := &vnc.Proxy{
		Dial: func(ctx context.Context) (io.ReadWriteCloser, error) {
			return vnc.Dial(ctx, o.Config, o.Namespace, o.Name)
		},
		Event: func(viewer net.Addr, what string, err error) {
			if err != nil {
				err = o.explain("get", vmiResource, vnc.Subresource, err)
				fmt.Fprintf(o.ErrOut, "viewer %s: %s: %v\n", viewer, what, err)
				return
			}
			fmt.Fprintf(o.ErrOut, "viewer %s: %s\n", viewer, what)
		},
	}
	return p.Serve(ctx, l)
}

// viewers are the VNC viewers virtctl knows how to start, in order of
// preference, each with its way of naming a server.
var viewers = []struct {
	name string
	args func(addr *net.TCPAddr) []string
}{
	{"remote-viewer", func(a *net.TCPAddr) []string { return []string{"vnc://" + a.String()} }},
	{"vncviewer", func(a *net.TCPAddr) []string { return []string{fmt.Sprintf("%s::%d", a.IP, a.Port)} }},
}

// findViewer is a command that starts the first viewer on the PATH at
// addr, its output going to out, or nil.
func findViewer(addr *net.TCPAddr, out io.Writer) *exec.Cmd {
	for _, v := range viewers {
		if path, err := exec.LookPath(v.name); err == nil {
			cmd := exec.Command(path, v.args(addr)...)
			cmd.Stdout, cmd.Stderr = out, out
			return cmd
		}
	}
	return nil
}

func viewerNames() string {
	names := make([]string, len(viewers))
	for i, v := range viewers {
		names[i] = v.name
	}
	return strings.Join(names, ", ")
}

// ScreenshotOptions is `vnc screenshot VMI`, KubeVirt's flags.
type ScreenshotOptions struct {
	target
	// File is where the PNG goes; - is standard output.
	File string
	// MoveCursor is KubeVirt's --move-cursor, sent along; the server
	// moves nothing (the hypervisor takes the picture).
	MoveCursor bool
	// Timeout bounds the whole screenshot.
	Timeout time.Duration
	genericiooptions.IOStreams
}

func newScreenshotCommand(name string, f genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ScreenshotOptions{Timeout: time.Minute, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "screenshot VMI",
		Short: "Save a picture of a virtual machine instance's display as PNG",
		Long: "Save a picture of a virtual machine instance's display as PNG: the hypervisor on the\n" +
			"guest's node takes it (GET virtualmachineinstances/VMI/vnc/screenshot, allowed to whoever\n" +
			"may open its VNC).",
		Example: examples(name,
			"Save the example VM's screen", "vnc screenshot vmi-tiny --file vmi-tiny.png",
			"Pipe it on", "vnc screenshot vmi-tiny --file - | display"),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(f, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVarP(&o.File, "file", "f", "", "PNG file to write (- for standard output)")
	cmd.Flags().BoolVarP(&o.MoveCursor, "move-cursor", "m", false, "KubeVirt's request to move the cursor to wake the screen; accepted, the picture is taken as the screen is")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", o.Timeout, "how long to wait for the picture")
	return cmd
}

// Complete reads the kubeconfig flags and the VMI's name.
func (o *ScreenshotOptions) Complete(f genericclioptions.RESTClientGetter, args []string) error {
	return o.complete(f, args[0])
}

// Validate checks the flags.
func (o *ScreenshotOptions) Validate() error {
	if o.File == "" {
		return fmt.Errorf("say where the PNG goes with --file (- for standard output)")
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout must be more than 0, not %v", o.Timeout)
	}
	return o.validate("VMI")
}

// Run takes the screenshot and writes it as the server sent it, once it
// reads as a PNG.
func (o *ScreenshotOptions) Run(ctx context.Context) error {
	shot, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	data, err := vnc.Screenshot(shot, o.Client, o.Namespace, o.Name, o.MoveCursor)
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no picture of the display of %s within %v (--timeout waits longer)", o.Name, o.Timeout)
	case err != nil:
		return o.explain("get", vmiResource, vnc.ScreenshotSubresource, err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("the screenshot of %s is not a PNG: %w", o.Name, err)
	}
	if o.File == "-" {
		_, err := o.Out.Write(data)
		return err
	}
	if err := os.WriteFile(o.File, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", o.File, err)
	}
	fmt.Fprintf(o.ErrOut, "Screenshot of %s (%dx%d) written to %s\n", o.Name, cfg.Width, cfg.Height, o.File)
	return nil
}
