package virtualmachineinstance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/util/dryrun"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apis/virtualization/validation"
	"kubevirt.dev/virt/apiserver/action"
)

// The actions are PUTs (RBAC verb update) forwarded to the VMI's handler,
// whose metav1.Status is the answer: a success, or its error (409 already
// paused, 503 launcher not answering, ...) as the same API error. Each
// takes its options as the body (apiserver/action): KubeVirt's for pause
// and unpause, SoftRebootOptions for softreboot, which KubeVirt sends
// without a body (an empty body is empty options). The options' dryRun is
// honoured; a dryRun query parameter is refused by k8s.io/apiserver (400),
// as for every connect subresource.

// actionTimeout bounds the handler's answer. Its launcher call has a
// timeout and retries of its own.
const actionTimeout = 30 * time.Second

// pauseREST returns virtualmachineinstances/pause: the guest's vCPUs stop.
func (g *guests) pauseREST(scheme *runtime.Scheme) (*action.REST, error) {
	return action.New(scheme, func() *virtualization.PauseOptions { return &virtualization.PauseOptions{} },
		func(ctx context.Context, name string, opts *virtualization.PauseOptions) (runtime.Object, error) {
			if errs := validation.ValidatePauseOptions(opts); len(errs) > 0 {
				return nil, apierrors.NewInvalid(virtualization.Kind("PauseOptions"), name, errs)
			}
			return g.act(ctx, name, pause, dryrun.IsDryRun(opts.DryRun))
		})
}

// unpauseREST returns virtualmachineinstances/unpause: the guest's vCPUs
// resume.
func (g *guests) unpauseREST(scheme *runtime.Scheme) (*action.REST, error) {
	return action.New(scheme, func() *virtualization.UnpauseOptions { return &virtualization.UnpauseOptions{} },
		func(ctx context.Context, name string, opts *virtualization.UnpauseOptions) (runtime.Object, error) {
			if errs := validation.ValidateUnpauseOptions(opts); len(errs) > 0 {
				return nil, apierrors.NewInvalid(virtualization.Kind("UnpauseOptions"), name, errs)
			}
			return g.act(ctx, name, unpause, dryrun.IsDryRun(opts.DryRun))
		})
}

// softRebootREST returns virtualmachineinstances/softreboot: the guest is
// asked to reboot (ACPI).
func (g *guests) softRebootREST(scheme *runtime.Scheme) (*action.REST, error) {
	return action.New(scheme, func() *virtualization.SoftRebootOptions { return &virtualization.SoftRebootOptions{} },
		func(ctx context.Context, name string, opts *virtualization.SoftRebootOptions) (runtime.Object, error) {
			if errs := validation.ValidateSoftRebootOptions(opts); len(errs) > 0 {
				return nil, apierrors.NewInvalid(virtualization.Kind("SoftRebootOptions"), name, errs)
			}
			return g.act(ctx, name, softReboot, dryrun.IsDryRun(opts.DryRun))
		})
}

// guestAction is a handler's action: its subresource and what a success
// means.
type guestAction struct {
	subresource string
	done        string
}

var (
	pause      = guestAction{"pause", "VMI %s was paused"}
	unpause    = guestAction{"unpause", "VMI %s was unpaused"}
	softReboot = guestAction{"softreboot", "VMI %s was asked to reboot"}
)

// act runs a on the guest of the VMI name: 404, 409 and 503 as find says,
// a dry run stops there; else the handler's answer, passed on.
func (g *guests) act(ctx context.Context, name string, a guestAction, dryRun bool) (*metav1.Status, error) {
	guest, err := g.find(ctx, name, a.subresource)
	if err != nil {
		return nil, err
	}
	done := fmt.Sprintf(a.done, name)
	if dryRun {
		return &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusOK,
			Message: done + " (dry run: virt-handler was not called)"}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, guest.location.String(), nil)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	resp, err := guest.transport.RoundTrip(req)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, apierrors.NewTimeoutError(fmt.Sprintf("the virt-handler of node %s did not answer %s of VMI %s in time",
			guest.vmi.Status.NodeName, a.subresource, name), 0)
	}
	if err != nil {
		return nil, unreachable(guest.vmi, err)
	}
	defer resp.Body.Close()
	st, err := handlerStatus(resp)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("%s of VMI %s: the virt-handler of node %s: %w", a.subresource, name, guest.vmi.Status.NodeName, err))
	}
	if st.Status == metav1.StatusFailure || resp.StatusCode >= http.StatusMultipleChoices {
		st.Status = metav1.StatusFailure
		return nil, &apierrors.StatusError{ErrStatus: *st}
	}
	if st.Message == "" {
		st.Message = done
	}
	return st, nil
}

// handlerStatus reads the Status a handler answers with.
func handlerStatus(resp *http.Response) (*metav1.Status, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read the answer (%s): %w", resp.Status, err)
	}
	st := &metav1.Status{}
	if err := json.Unmarshal(data, st); err != nil || st.Kind != "Status" {
		const max = 200
		if len(data) > max {
			data = data[:max]
		}
		return nil, fmt.Errorf("answered %s with no Status: %q", resp.Status, data)
	}
	st.TypeMeta = metav1.TypeMeta{}
	if st.Code == 0 {
		st.Code = int32(resp.StatusCode)
	}
	return st, nil
}
