package guestprobe

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// Agent sends guest agent commands to the domain name (hypervisor.Conn).
type Agent interface {
	AgentCommand(name, command string, timeout time.Duration) (string, error)
}

// Request is one probe: Ping, or Exec (a command and its arguments).
type Request struct {
	Exec           []string `json:"exec,omitempty"`
	Ping           bool     `json:"ping,omitempty"`
	TimeoutSeconds int32    `json:"timeoutSeconds,omitempty"`
}

// Response is the probe's result: ExitCode 0 passes. Output is what the
// command printed (cut to maxOutput), Error why the probe could not run.
type Response struct {
	ExitCode int    `json:"exitCode"`
	Output   string `json:"output,omitempty"`
	Error    string `json:"error,omitempty"`
}

// maxOutput bounds the command's output kept for the probe's message, as
// the kubelet cuts an exec probe's.
const maxOutput = 10 << 10

// pollInterval is how often guest-exec-status is asked.
const pollInterval = 100 * time.Millisecond

// Run runs req against the guest agent of domain within its timeout (one
// second when unset, as for a container's probe).
func Run(ctx context.Context, agent Agent, domain string, req Request) Response {
	timeout := time.Duration(req.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	switch {
	case req.Ping:
		if _, err := agent.AgentCommand(domain, `{"execute":"guest-ping"}`, time.Until(deadline)); err != nil {
			return Response{ExitCode: 1, Error: "the guest agent did not answer: " + err.Error()}
		}
		return Response{}
	case len(req.Exec) > 0:
		return exec(ctx, agent, domain, req.Exec)
	default:
		return Response{ExitCode: 1, Error: "neither ping nor a command"}
	}
}

func exec(ctx context.Context, agent Agent, domain string, command []string) Response {
	deadline, _ := ctx.Deadline()
	cmd, err := json.Marshal(map[string]any{"execute": "guest-exec", "arguments": map[string]any{
		"path": command[0], "arg": append([]string{}, command[1:]...), "capture-output": true}})
	if err != nil {
		return Response{ExitCode: 1, Error: err.Error()}
	}
	out, err := agent.AgentCommand(domain, string(cmd), time.Until(deadline))
	if err != nil {
		return Response{ExitCode: 1, Error: "guest-exec: " + err.Error()}
	}
	var started struct {
		Return struct {
			PID int `json:"pid"`
		} `json:"return"`
	}
	if err := json.Unmarshal([]byte(out), &started); err != nil {
		return Response{ExitCode: 1, Error: fmt.Sprintf("guest-exec answered %q: %v", out, err)}
	}
	status := fmt.Sprintf(`{"execute":"guest-exec-status","arguments":{"pid":%d}}`, started.Return.PID)
	for {
		out, err := agent.AgentCommand(domain, status, time.Until(deadline))
		if err != nil {
			return Response{ExitCode: 1, Error: "guest-exec-status: " + err.Error()}
		}
		var st struct {
			Return struct {
				Exited   bool   `json:"exited"`
				ExitCode int    `json:"exitcode"`
				Signal   int    `json:"signal"`
				OutData  string `json:"out-data"`
				ErrData  string `json:"err-data"`
			} `json:"return"`
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			return Response{ExitCode: 1, Error: fmt.Sprintf("guest-exec-status answered %q: %v", out, err)}
		}
		if r := st.Return; r.Exited {
			o, _ := base64.StdEncoding.DecodeString(r.OutData)
			e, _ := base64.StdEncoding.DecodeString(r.ErrData)
			output := string(o) + string(e)
			if len(output) > maxOutput {
				output = output[:maxOutput]
			}
			code := r.ExitCode
			if r.Signal != 0 && code == 0 {
				code = 128 + r.Signal
			}
			return Response{ExitCode: code, Output: output}
		}
		select {
		case <-ctx.Done():
			return Response{ExitCode: 1, Error: fmt.Sprintf("the command did not exit within the probe's timeout (guest PID %d)", started.Return.PID)}
		case <-time.After(pollInterval):
		}
	}
}

// Serve answers probes on the unix socket path (mode 0600) until ctx ends.
func Serve(ctx context.Context, path string, agent Agent, domain string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		lis.Close()
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /probe", func(w http.ResponseWriter, r *http.Request) {
		var req Request
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Run(r.Context(), agent, domain, req))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Probe sends req to the launcher's socket path and returns its answer.
func Probe(ctx context.Context, path string, req Request) (Response, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Response{}, err
	}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://launcher/probe", bytes.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return Response{}, fmt.Errorf("ask the launcher: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Response{}, fmt.Errorf("the launcher answered %s", resp.Status)
	}
	var out Response
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return Response{}, err
	}
	return out, nil
}
