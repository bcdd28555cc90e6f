package guestaccess

import (
	"context"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/node/monitor"
)

// action is a lifecycle action on a running guest: one launcher call.
type action struct {
	// name is the last path element, the subresource's name.
	name string
	// refuse says why the action makes no sense for a domain, "" if it does.
	refuse func(vmi string, d *apiv1.Domain) string
	call   func(*monitor.Launcher, context.Context) error
	// done is logged after the call.
	done string
}

func paused(d *apiv1.Domain) bool { return d.GetState() == apiv1.DomainState_DOMAIN_STATE_PAUSED }

var actions = []action{
	{
		name: "pause",
		refuse: func(vmi string, d *apiv1.Domain) string {
			if paused(d) {
				return fmt.Sprintf("VMI %s is already paused", vmi)
			}
			return ""
		},
		call: (*monitor.Launcher).Pause,
		done: "Guest paused",
	},
	{
		name: "unpause",
		refuse: func(vmi string, d *apiv1.Domain) string {
			if !paused(d) {
				return fmt.Sprintf("VMI %s is not paused", vmi)
			}
			return ""
		},
		call: (*monitor.Launcher).Unpause,
		done: "Guest unpaused",
	},
	{
		name: "softreboot",
		refuse: func(vmi string, d *apiv1.Domain) string {
			switch {
			case paused(d):
				return fmt.Sprintf("VMI %s is paused", vmi)
			case d.GetShutdownRequested():
				return fmt.Sprintf("VMI %s is shutting down", vmi)
			}
			return ""
		},
		call: (*monitor.Launcher).SoftReboot,
		done: "Guest asked to reboot",
	},
}

// act runs a on the request's VMI and answers a metav1.Status. The body
// (the action's options, validated by virt-apiserver) is not read: no
// option changes what the launcher does.
func (s *Server) act(w http.ResponseWriter, r *http.Request, a action) {
	t, err := s.find(r)
	if err != nil {
		writeStatus(w, err)
		return
	}
	logger := klog.LoggerWithValues(klog.FromContext(r.Context()), "vmi", t.String(), "action", a.name)
	l, ok := s.cfg.Launchers.Get(t.pod.UID)
	if !ok {
		writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("virt-handler is not connected to the launcher of VMI %s yet", t.vmi.Name)))
		return
	}
	d := l.State().Domain
	if d == nil {
		writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("the launcher of VMI %s has not reported its domain yet", t.vmi.Name)))
		return
	}
	if why := a.refuse(t.vmi.Name, d); why != "" {
		writeStatus(w, conflict(t.vmi, why))
		return
	}
	if err := a.call(l, r.Context()); err != nil {
		logger.Info("Action failed", "err", err)
		writeStatus(w, launcherError(t, a.name, err))
		return
	}
	logger.Info(a.done, "remote", r.RemoteAddr)
	writeJSON(w, metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusOK})
}

// launcherError turns a launcher's answer into the API's.
func launcherError(t *target, action string, err error) error {
	msg := status.Convert(err).Message()
	switch status.Code(err) {
	case codes.FailedPrecondition, codes.ResourceExhausted:
		// ResourceExhausted: the guest's screen is larger than a
		// screenshot may be; it is the VMI's state, like the rest.
		return conflict(t.vmi, fmt.Sprintf("VMI %s: %s", t.vmi.Name, msg))
	case codes.Unimplemented:
		return newStatus(http.StatusNotImplemented, metav1.StatusReasonBadRequest,
			fmt.Sprintf("the launcher of VMI %s is too old for %s: %s", t.vmi.Name, action, msg))
	case codes.Unavailable:
		return apierrors.NewServiceUnavailable(fmt.Sprintf("the launcher of VMI %s is not answering: %s", t.vmi.Name, msg))
	case codes.DeadlineExceeded:
		return apierrors.NewTimeoutError(fmt.Sprintf("the launcher of VMI %s did not answer in time: %s", t.vmi.Name, msg), 0)
	}
	return apierrors.NewInternalError(fmt.Errorf("%s VMI %s: %w", action, t.vmi.Name, err))
}
