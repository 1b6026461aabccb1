package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// workerChildEnv marks a process started by workerChild; cmd/web's tests
// run main in it (TestMain), since their executable is the test binary.
const workerChildEnv = "CLOSER_WORKER_CHILD"

// workerChild runs the background jobs of a ROLE=all server in a child
// process of the same binary (ROLE=worker) at a lower scheduling priority
// (WORKER_NICE). In the serving process a recompute's fits took the CPU
// that the requests and PostgreSQL needed: under issue 24's crowd of
// 1,500 annotators a new study's first dimension choice and bootstrap
// (seconds of one core) sent the answer p99 past 100 ms. Goroutines
// cannot carry an OS priority; a process can. The child restarts when it
// dies, and dies with this process (Pdeathsig).
type workerChild struct {
	exe  string
	env  []string
	out  io.Writer
	log  *slog.Logger
	stop chan struct{}
	done chan struct{}

	mu  sync.Mutex
	cmd *exec.Cmd
	pid int
}

// newWorkerChild prepares the child of a server configured by cfg: the
// same settings, ROLE=worker, no profiler listener; its output goes to out.
func newWorkerChild(cfg config, out io.Writer, log *slog.Logger) (*workerChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("worker child: find this binary: %w", err)
	}
	return &workerChild{exe: exe, env: childEnv(os.Environ(), cfg.env), out: out, log: log,
		stop: make(chan struct{}), done: make(chan struct{})}, nil
}

// childEnv is environ with the settings read (set ones replaced, unset
// ones removed), made a worker's.
func childEnv(environ []string, read map[string]string) []string {
	override := map[string]string{}
	for k, v := range read {
		override[k] = v
	}
	override["ROLE"] = roleWorker
	override["DEBUG_ADDR"] = "" // one profiler per address: the server's
	override[workerChildEnv] = "1"
	env := slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, ok := override[k]
		return ok
	})
	for k, v := range override {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	slices.Sort(env)
	return env
}

// Start starts the child and a goroutine that restarts it whenever it
// exits before Stop, after a pause that grows to 30 s.
func (w *workerChild) Start() error {
	started := make(chan error, 1)
	go w.supervise(started)
	return <-started
}

func (w *workerChild) supervise(started chan<- error) {
	defer close(w.done)
	// Pdeathsig is sent when the thread that started the child ends, not
	// the process: keep this goroutine on its thread for the child's life.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pause := time.Second
	for first := true; ; first = false {
		cmd := exec.Command(w.exe)
		cmd.Env = w.env
		cmd.Stdout, cmd.Stderr = w.out, w.out
		// Its own process group: a terminal's Ctrl-C reaches this process,
		// which then stops the child in order (Stop).
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
		err := cmd.Start()
		if err == nil {
			w.mu.Lock()
			w.cmd, w.pid = cmd, cmd.Process.Pid
			w.mu.Unlock()
		}
		if first {
			started <- err
			if err != nil {
				return
			}
		}
		if err == nil {
			w.log.Info("background jobs run in a child process", "pid", cmd.Process.Pid)
			err = cmd.Wait()
			w.mu.Lock()
			w.cmd = nil
			w.mu.Unlock()
		}
		select {
		case <-w.stop:
			return
		default:
		}
		w.log.Error("the background jobs' child process ended; restarting it", "err", err, "in", pause)
		select {
		case <-w.stop:
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 30*time.Second)
	}
}

// PID is the running child's process id (0: none).
func (w *workerChild) PID() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cmd == nil {
		return 0
	}
	return w.pid
}

// Stop asks the child to finish (SIGTERM: a running recompute gets its
// 20 s, as in a worker replica) and waits for it; past ctx it is killed.
func (w *workerChild) Stop(ctx context.Context) error {
	close(w.stop)
	w.mu.Lock()
	if w.cmd != nil {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
	}
	w.mu.Unlock()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
	}
	w.mu.Lock()
	if w.cmd != nil {
		_ = w.cmd.Process.Kill()
	}
	w.mu.Unlock()
	<-w.done
	return errors.New("stop the background jobs' child process: killed after " + ctx.Err().Error())
}

// lowerPriority sets every thread of this process to niceness nice.
// Linux keeps a priority per thread and a new thread takes its creator's,
// so once every thread has it, every later one has it too; a pass that
// finds none left to change ends.
func lowerPriority(nice int) error {
	for range 10 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("lower this process's priority: %w", err)
		}
		changed := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			// getpriority's raw value is 20 - nice (syscall, not libc).
			if p, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid); err == nil && 20-p == nice {
				continue
			}
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("lower the priority of thread %d to %d: %w", tid, nice, err)
			}
			changed = true
		}
		if !changed {
			return nil
		}
	}
	return nil
}
