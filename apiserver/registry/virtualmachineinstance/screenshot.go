package virtualmachineinstance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/registry/rest"
)

// A screenshot is a GET of vnc/screenshot, as KubeVirt serves it: the
// handler asks the launcher, which has libvirt take the picture and
// converts it to PNG; virt-apiserver passes the PNG on. It is counted with
// VNC as a long-running request (the same subresource for
// k8s.io/apiserver), so it bounds itself.

// screenshotTimeout bounds a screenshot, picture included. The handler's
// own bound is shorter: its refusal arrives first.
const screenshotTimeout = 45 * time.Second

// maxScreenshotBytes bounds what is passed on of a handler's answer: the
// launcher's cap (8.3 million pixels) makes a PNG far smaller, unless the
// node is not the one it claims to be.
const maxScreenshotBytes = 64 << 20

// MoveCursorParam is KubeVirt's query parameter asking to move the cursor
// to wake up a screen saver. It is accepted, a boolean, and changes
// nothing: the hypervisor takes the picture without a VNC client that
// could move a cursor (KubeVirt's virt-handler ignores it too).
const MoveCursorParam = "moveCursor"

// screenshot returns the handler that answers a PNG of the screen of the
// VMI name: 404, 409, 503 as find says before anything is asked; then the
// handler's refusal as its Status, or its picture.
func (g *guests) screenshot(ctx context.Context, name string, responder rest.Responder) (http.Handler, error) {
	guest, err := g.find(ctx, name, "vnc/screenshot")
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if v := req.URL.Query().Get(MoveCursorParam); v != "" {
			if _, err := strconv.ParseBool(v); err != nil {
				responder.Error(apierrors.NewBadRequest(fmt.Sprintf("%s=%q is not a boolean", MoveCursorParam, v)))
				return
			}
		}
		ctx, cancel := context.WithTimeout(ctx, screenshotTimeout)
		defer cancel()
		hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, guest.location.String(), nil)
		if err != nil {
			responder.Error(apierrors.NewInternalError(err))
			return
		}
		resp, err := guest.transport.RoundTrip(hreq)
		if errors.Is(err, context.DeadlineExceeded) {
			responder.Error(apierrors.NewTimeoutError(fmt.Sprintf("the virt-handler of node %s did not answer the screenshot of VMI %s in time",
				guest.vmi.Status.NodeName, name), 0))
			return
		}
		if err != nil {
			responder.Error(unreachable(guest.vmi, err))
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !isPNG(resp.Header.Get("Content-Type")) {
			st, err := handlerStatus(resp)
			if err != nil {
				responder.Error(apierrors.NewInternalError(fmt.Errorf("screenshot of VMI %s: the virt-handler of node %s: %w", name, guest.vmi.Status.NodeName, err)))
				return
			}
			responder.Error(&apierrors.StatusError{ErrStatus: *st})
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		n, err := io.Copy(w, io.LimitReader(resp.Body, maxScreenshotBytes+1))
		if err != nil || n > maxScreenshotBytes {
			// The client must not take a cut picture for whole.
			panic(http.ErrAbortHandler)
		}
	}), nil
}

func isPNG(contentType string) bool {
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && t == "image/png"
}
