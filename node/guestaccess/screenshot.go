package guestaccess

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
)

// screenshotTimeout bounds a screenshot: the launcher's libvirt call, its
// conversion to PNG and the transfer.
const screenshotTimeout = 30 * time.Second

// maxScreenshotBytes bounds what is passed on of a launcher's picture: the
// launcher runs in the tenant's pod, and its cap (8.3 million pixels)
// makes an honest PNG far smaller. A variable for the tests.
var maxScreenshotBytes = 64 << 20

// screenshot answers a PNG of the request's VMI's first screen, taken by
// its launcher (libvirt's virDomainScreenshot): no VNC client on the way.
// The launcher's refusals (not running, too large, too old) come before
// the first byte and are answered as a Status; a stream that breaks later
// aborts the response, so a client never takes a cut picture for whole.
func (s *Server) screenshot(w http.ResponseWriter, r *http.Request) {
	t, err := s.find(r)
	if err != nil {
		writeStatus(w, err)
		return
	}
	if err := hasScreen(t); err != nil {
		writeStatus(w, err)
		return
	}
	l, ok := s.cfg.Launchers.Get(t.pod.UID)
	if !ok {
		writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("virt-handler is not connected to the launcher of VMI %s yet", t.vmi.Name)))
		return
	}
	logger := klog.LoggerWithValues(klog.FromContext(r.Context()), "vmi", t.String(), "action", "screenshot")
	ctx, cancel := context.WithTimeout(r.Context(), screenshotTimeout)
	defer cancel()
	stream, err := l.Screenshot(ctx)
	if err != nil {
		writeStatus(w, launcherError(t, "screenshot", err))
		return
	}
	first, err := stream.Recv()
	if err != nil {
		logger.Info("Screenshot failed", "err", err)
		writeStatus(w, launcherError(t, "screenshot", err))
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	size := 0
	for chunk := first; ; {
		if size+len(chunk.GetPng()) > maxScreenshotBytes {
			logger.Info("Screenshot larger than a picture may be; cut off", "bytes", size, "max", maxScreenshotBytes)
			panic(http.ErrAbortHandler)
		}
		n, err := w.Write(chunk.GetPng())
		size += n
		if err != nil {
			logger.Info("Screenshot not delivered", "err", err)
			return
		}
		chunk, err = stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			logger.Info("Screenshot stream broke", "err", err, "bytes", size)
			panic(http.ErrAbortHandler)
		}
	}
	logger.Info("Screenshot taken", "width", first.GetWidth(), "height", first.GetHeight(), "bytes", size, "remote", r.RemoteAddr)
}
