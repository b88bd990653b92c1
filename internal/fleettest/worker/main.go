// Command worker is a fleet worker process that runs trivial jobs (fleettest.Exec)
// with the fleet's real worker code, for the tests that SIGKILL workers and those
// of credentials and TLS (--credentials, --tls-ca).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hwtest/hwtest/fleet"
	"github.com/hwtest/hwtest/internal/fleettest"
)

func main() {
	url := flag.String("nats", "", "server URL")
	id := flag.String("id", "", "worker id")
	targets := flag.String("targets", "cpu", "comma-separated targets")
	catalog := flag.String("catalog", "test-catalog", "catalog sha256 to announce")
	maxCrashes := flag.Int("max-crashes", 0, "deliveries before a job is poison")
	ackWait := flag.Duration("ack-wait", time.Second, "the consumers' AckWait, when this worker creates them")
	credFile := flag.String("credentials", "", "file of the fleet's credentials (else $"+fleet.CredentialsFileEnv+", or $"+fleet.UserEnv+" and $"+fleet.PasswordEnv+")")
	tlsCA := flag.String("tls-ca", "", "PEM file of the CA that signed the server's certificate")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	creds, err := fleet.LoadCredentials(*credFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	nc, err := fleet.Connect(fleet.ConnectOptions{URL: *url, Name: *id, Credentials: creds, TLSCA: *tlsCA})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := &fleet.Worker{JS: js, NC: nc, Exec: fleettest.Exec(*id), MaxCrashes: *maxCrashes,
		Queue: fleet.QueueOptions{AckWait: *ackWait}, Heartbeat: 200 * time.Millisecond, Log: os.Stderr,
		Announce: fleet.Announcement{ID: *id, Host: "test", Targets: strings.Split(*targets, ","), CatalogSHA256: *catalog}}
	if err := w.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
