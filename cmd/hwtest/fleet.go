package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/fleet"
	"github.com/hwtest/hwtest/history"
	"github.com/hwtest/hwtest/layout"
	"github.com/hwtest/hwtest/matrix"
	"github.com/hwtest/hwtest/runner"
)

// FleetFlags say how to reach a fleet's NATS server.
type FleetFlags struct {
	Credentials string // file holding "user:password"
	TLSCA       string
}

func addFleetFlags(cmd *cobra.Command, f *FleetFlags) {
	cmd.Flags().StringVar(&f.Credentials, "credentials", "", "file holding \"user:password\" (mode 600); default $"+fleet.CredentialsFileEnv+", else $"+fleet.UserEnv+" and $"+fleet.PasswordEnv)
	cmd.Flags().StringVar(&f.TLSCA, "tls-ca", "", "PEM file of the CA that signed the server's TLS certificate (for tls:// URLs)")
}

// connect reaches the fleet at url (or the embedded server srv, in process).
func (f *FleetFlags) connect(url, name string, srv *fleet.Server) (*nats.Conn, jetstream.JetStream, error) {
	creds, err := fleet.LoadCredentials(f.Credentials)
	if err != nil {
		return nil, nil, err
	}
	nc, err := fleet.Connect(fleet.ConnectOptions{URL: url, Name: name, Credentials: creds, TLSCA: f.TLSCA, InProcess: srv})
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// ServeOptions is what `hwtest serve` acts on.
type ServeOptions struct {
	*Globals
	FleetFlags
	Listen  string
	NATS    string // an existing server instead of the embedded one
	Store   string
	TLSCert string
	TLSKey  string
}

func newServeCmd(g *Globals) *cobra.Command {
	opts := &ServeOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Keep a fleet's job queue and results (NATS JetStream) and store its runs in the history",
		Long: "Starts an embedded NATS server with JetStream (files in .hwtest/nats) on --listen,\n" +
			"or uses an existing server (--nats URL), makes the fleet's streams, and stores each\n" +
			"fleet run in the history database when its submitter ends it. Workers\n" +
			"(`hwtest worker --nats URL`) and submitters (`hwtest run --fleet URL`) connect to it.\n" +
			"Listening on anything but a loopback address requires credentials; give TLS too\n" +
			"unless the network is trusted. Runs until SIGINT or SIGTERM.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serveRun(cmd.Context(), opts) },
	}
	cmd.Flags().StringVar(&opts.Listen, "listen", fleet.DefaultListen, "HOST:PORT of the embedded server")
	cmd.Flags().StringVar(&opts.NATS, "nats", "", "use this NATS server (with JetStream) instead of starting one")
	cmd.Flags().StringVar(&opts.Store, "store", "", "JetStream's folder (default ROOT/.hwtest/nats)")
	cmd.Flags().StringVar(&opts.TLSCert, "tls-cert", "", "PEM certificate of the embedded server")
	cmd.Flags().StringVar(&opts.TLSKey, "tls-key", "", "PEM key of the embedded server")
	addFleetFlags(cmd, &opts.FleetFlags)
	return cmd
}

func serveRun(ctx context.Context, opts *ServeOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := opts.resolveRoot(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	url := opts.NATS
	var srv *fleet.Server
	if url == "" {
		creds, err := fleet.LoadCredentials(opts.Credentials)
		if err != nil {
			return err
		}
		store := opts.Store
		if store == "" {
			store = layout.State(opts.Root, "nats")
		}
		srv, err = fleet.StartServer(fleet.ServerOptions{Listen: opts.Listen, StoreDir: store, Credentials: creds, TLSCert: opts.TLSCert, TLSKey: opts.TLSKey})
		if err != nil {
			return err
		}
		defer srv.Shutdown()
		url = srv.URL
		fmt.Fprintf(opts.Stderr, "serve: NATS with JetStream on %s (files in %s)\n", url, relToWD(store))
	}
	nc, js, err := opts.connect(url, "hwtest serve", srv)
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := fleet.Setup(ctx, js); err != nil {
		return err
	}
	shown := fleet.RedactURL(url)
	fmt.Fprintf(opts.Stdout, "fleet ready: hwtest worker --nats %s; hwtest run --fleet %s\n", shown, shown)
	rec := &fleet.Recorder{JS: js, Log: opts.Stderr, Store: func(ctx context.Context, m matrix.Matrix) error {
		err := storeMatrix(ctx, opts.Globals, m, "fleet", false)
		if errors.Is(err, history.ErrDuplicate) {
			return nil // its submitter stored it in this database already
		}
		return err
	}}
	return rec.Run(ctx)
}

// storeMatrix adds a run's matrix to the history database.
func storeMatrix(ctx context.Context, g *Globals, m matrix.Matrix, source string, interrupted bool) error {
	db, err := g.openHistory(ctx, history.ReadWrite)
	if err != nil {
		return err
	}
	err = db.Store(ctx, history.Run{Matrix: m, Source: source, Interrupted: interrupted})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// WorkerOptions is what `hwtest worker` acts on.
type WorkerOptions struct {
	*Globals
	FleetFlags
	NATS      string
	Name      string
	TargetIDs []string
	Timeout   time.Duration
	AckWait   time.Duration
}

func newWorkerCmd(g *Globals) *cobra.Command {
	opts := &WorkerOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "worker --nats URL",
		Short: "Run a fleet's jobs for the targets this machine has",
		Long: "Regenerates and builds the suite, probes this machine's targets, announces\n" +
			"itself to the fleet (its targets, versions and catalogs' hash, then a heartbeat)\n" +
			"and takes the jobs of the targets it has, one at a time: each is the model's\n" +
			"specs on that target in a suite process of its own, as in `hwtest run`. A job of\n" +
			"other catalogs or of another model file is refused, with the reason as its cell.\n" +
			"SIGINT or SIGTERM hands the running job back to the fleet and exits.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.NATS == "" {
				return errors.New("--nats URL is required (the fleet's server, e.g. nats://127.0.0.1:4222 from `hwtest serve`)")
			}
			return workerRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.NATS, "nats", "", "the fleet's NATS server URL")
	cmd.Flags().StringVar(&opts.Name, "name", "", "this worker's id (default HOST-PID)")
	cmd.Flags().StringSliceVar(&opts.TargetIDs, "target", nil, "take only these targets' jobs (default every target found here)")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "per-job suite process timeout, unless the job sets one")
	cmd.Flags().DurationVar(&opts.AckWait, "ack-wait", fleet.DefaultAckWait, "how long the job of a worker that died waits before another takes it (set when a target's queue is first made)")
	addFleetFlags(cmd, &opts.FleetFlags)
	return cmd
}

func workerRun(ctx context.Context, opts *WorkerOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := opts.loadCatalogs()
	if err != nil {
		return err
	}
	for _, id := range opts.TargetIDs {
		if _, ok := c.Target(id); !ok {
			return fmt.Errorf("--target %q is not in %s", id, relToWD(opts.HardwareFile))
		}
	}
	sum, err := fleet.CatalogSHA256(opts.ModelsFile, opts.HardwareFile)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	if opts.Name == "" {
		// A worker id is one NATS subject token and key: a host such as
		// MacBook-Pro.local gives MacBook-Pro-local-<pid>.
		opts.Name = strings.Map(func(r rune) rune {
			if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
				return r
			}
			return '-'
		}, host) + fmt.Sprintf("-%d", os.Getpid())
	}
	if strings.ContainsAny(opts.Name, " .*>/\\") {
		return fmt.Errorf("--name %q: use letters, digits, - and _ only", opts.Name)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	nc, js, err := opts.connect(opts.NATS, "hwtest worker "+opts.Name, nil)
	if err != nil {
		return err
	}
	defer nc.Close()
	// The suite this worker runs is its catalogs', as in `hwtest run`.
	suites, err := opts.writeSuites(c)
	if err != nil {
		return err
	}
	work := layout.State(opts.Root, "worker", opts.Name)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(work)
	fmt.Fprintf(opts.Stderr, "worker %s: building the suite and probing the targets\n", opts.Name)
	m, err := runner.NewMachine(ctx, runner.Options{
		Root: opts.Root, Catalogs: c, RunID: "worker-" + opts.Name, Timeout: opts.Timeout, Log: opts.Stderr, TargetIDs: opts.TargetIDs,
		Env: opts.provenanceEnv(c), SuiteDir: suites.SuiteDir(),
	})
	if err != nil {
		return err
	}
	defer m.Close()
	targets := m.Available()
	if len(opts.TargetIDs) > 0 {
		targets = slices.DeleteFunc(targets, func(t string) bool { return !slices.Contains(opts.TargetIDs, t) })
	}
	for _, d := range m.Detected {
		if !d.Available && (len(opts.TargetIDs) == 0 || slices.Contains(opts.TargetIDs, d.Target)) {
			fmt.Fprintf(opts.Stderr, "worker %s: not taking %s: %s\n", opts.Name, d.Target, d.Reason)
		}
	}
	exec := &fleet.SuiteExecutor{Machine: m, Catalogs: c, Root: opts.Root, CatalogSHA256: sum, WorkDir: work, JS: js, NC: nc}
	w := &fleet.Worker{JS: js, NC: nc, Exec: exec.Exec, Log: opts.Stderr, Queue: fleet.QueueOptions{AckWait: opts.AckWait},
		Announce: fleet.Announcement{ID: opts.Name, Host: host, Targets: targets, Detection: m.Detected, CatalogSHA256: sum,
			Versions: map[string]string{"hwtest": codeCommit(opts.Root), "catalogs": catalogCommit(opts.Root, opts.ModelsFile, opts.HardwareFile), "go": goruntime.Version()}}}
	return w.Run(ctx)
}

// runFleet is `hwtest run --fleet URL`: the run's jobs go to the fleet's workers and
// their cells come back into this run's matrix and history.
func runFleet(ctx context.Context, opts *RunOptions, c *catalog.Catalogs) error {
	sum, err := fleet.CatalogSHA256(opts.ModelsFile, opts.HardwareFile)
	if err != nil {
		return err
	}
	reports, id, out, err := opts.newRunDir()
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Stderr, "run id: %s (fleet %s)\n", id, fleet.RedactURL(opts.Fleet))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	nc, js, err := opts.connect(opts.Fleet, "hwtest run "+id, nil)
	if err != nil {
		os.RemoveAll(out)
		return err
	}
	defer nc.Close()
	var allModels, allTargets []string
	settings := map[string]string{}
	for _, k := range fleet.MeasurementSettings {
		if v, ok := os.LookupEnv(k); ok {
			settings[k] = v
		}
	}
	p := fleet.Plan{Settings: settings, Run: id, Chains: map[string][]string{}, CatalogSHA256: sum, ModelSHA256: map[string]string{}, ModelFiles: map[string]fleet.ModelFile{}, Timeout: opts.Timeout}
	for _, m := range c.Models {
		allModels = append(allModels, m.ID)
		if len(opts.ModelIDs) == 0 || slices.Contains(opts.ModelIDs, m.ID) {
			p.Models = append(p.Models, m.ID)
			if sha, f, ok := fleet.ResolveModel(opts.Root, m); ok {
				p.ModelSHA256[m.ID], p.ModelFiles[sha] = sha, f
			} else {
				fmt.Fprintf(opts.Stderr, "run: %s: neither the model nor its fixture is here: each worker runs the file it has (its cell says whether that is the fixture)\n", m.ID)
			}
		}
	}
	for _, t := range c.Targets {
		allTargets = append(allTargets, t.ID)
		p.Chains[t.ID] = t.Fallback
		if len(opts.TargetIDs) == 0 || slices.Contains(opts.TargetIDs, t.ID) {
			p.Targets = append(p.Targets, t.ID)
		}
	}
	began := time.Now()
	sub := &fleet.Submitter{JS: js, NC: nc, Log: opts.Stderr, Progress: func(pr fleet.Progress) {
		cell := pr.Job.Model + " on " + pr.Job.Target
		if pr.Job.FallbackFor != "" {
			cell += " (fallback for " + pr.Job.FallbackFor + ")"
		}
		if pr.Taken {
			again := ""
			if pr.Attempt > 1 {
				again = fmt.Sprintf(" (attempt %d: the worker before died)", pr.Attempt)
			}
			fmt.Fprintf(opts.Stderr, "%s: took %s%s\n", pr.Worker, cell, again)
			return
		}
		for _, c := range pr.Cells {
			fmt.Fprintf(opts.Stderr, "%s: %s: %s%s\n", pr.Worker, cell, c.Status, reasonSuffix(c.Reason))
		}
	}}
	res, runErr := sub.Run(ctx, p)
	if res == nil {
		os.RemoveAll(out)
		return runErr
	}
	mx := fleet.Assemble(id, allModels, allTargets, res.Cells, res.Workers, time.Now())
	mx.DetectedAt = began.UTC()
	if err := matrix.Write(out, mx); err != nil {
		return err
	}
	fmt.Fprintf(opts.Stdout, "%s\n", mx.SummaryLine())
	fmt.Fprintf(opts.Stdout, "matrix: %s\n        %s\n", relToWD(filepath.Join(out, "matrix.md")), relToWD(filepath.Join(out, "matrix.json")))
	for _, w := range sortedByJobs(res.PerWorker) {
		fmt.Fprintf(opts.Stdout, "worker %s: %d jobs\n", w, res.PerWorker[w])
	}
	for _, r := range res.Rejected {
		fmt.Fprintf(opts.Stdout, "rejected: %s\n", r)
	}
	stored := storeMatrix(context.Background(), opts.Globals, mx, "fleet", runErr != nil)
	if errors.Is(stored, history.ErrDuplicate) {
		stored = nil // hwtest serve stored it in this database first
	} else if stored != nil {
		stored = fmt.Errorf("the history was not updated (the matrix files are written): %w", stored)
	} else {
		fmt.Fprintf(opts.Stdout, "history: %s (%d cells)\n", relToWD(opts.DB), len(mx.Cells))
	}
	if runErr != nil && ctx.Err() != nil {
		return &exitError{code: ExitInterrupted, err: errors.Join(fmt.Errorf("run %s interrupted: the matrix holds the cells that finished", id), stored)}
	}
	if runErr != nil {
		return errors.Join(fmt.Errorf("run %s stopped: %w (the matrix holds the cells that finished)", id, runErr), stored)
	}
	if err := runner.LinkLatest(reports, id); err != nil {
		return errors.Join(err, stored)
	}
	if stored != nil {
		return stored
	}
	return opts.failedCells(mx)
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}

func sortedByJobs(per map[string]int) []string {
	var ids []string
	for id := range per {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if per[a] != per[b] {
			return per[b] - per[a]
		}
		return strings.Compare(a, b)
	})
	return ids
}
