package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/runtime"
	"github.com/hwtest/hwtest/sources"
	"github.com/hwtest/hwtest/spec"
)

// ModelsBucket is the object store of model files a worker fetches from the fleet,
// each under its sha256. A file goes in only when a worker asks for it (the
// submitter serves its own files, while its run lasts): a catalog's gigabytes are
// not copied on every run.
const ModelsBucket = "hwtest-models"

// wantSubject is where a worker asks a run's submitter for a model file.
func wantSubject(run string) string { return "hwtest.models.want." + token(run) }

// ModelFile is a model file of the submitter's, by sha256.
type ModelFile struct {
	Path    string
	Fixture bool // a zoo fixture standing in for the real model
}

// ResolveModel is the file a model runs from here: its sha256 and where it is; ok
// false when neither the model nor its fixture is on this machine.
func ResolveModel(root string, m catalog.Model) (sha string, f ModelFile, ok bool) {
	rm, err := runtime.ResolveIn(root, spec.ModelOf(m))
	if err != nil {
		return "", ModelFile{}, false
	}
	return rm.SHA256, ModelFile{Path: rm.Path, Fixture: rm.Fixture != ""}, true
}

func modelStore(ctx context.Context, js jetstream.JetStream) (jetstream.ObjectStore, error) {
	obs, err := js.ObjectStore(ctx, ModelsBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		obs, err = js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: ModelsBucket, Storage: jetstream.FileStorage,
			Description: "model files workers fetch, by sha256",
			TTL:         ResultsKept, // a file no run asked for in a week goes
		})
		if errors.Is(err, jetstream.ErrBucketExists) {
			obs, err = js.ObjectStore(ctx, ModelsBucket)
		}
	}
	return obs, err
}

// serveModels answers workers' requests for the run's model files: it puts the
// file in ModelsBucket (once) and replies "" or why not.
func serveModels(ctx context.Context, js jetstream.JetStream, nc *nats.Conn, run string, files map[string]ModelFile) (*nats.Subscription, error) {
	return nc.Subscribe(wantSubject(run), func(m *nats.Msg) {
		sha := string(m.Data)
		reply := ""
		if f, ok := files[sha]; !ok {
			reply = "the submitter has no model file of sha256 " + short(sha)
		} else if err := putModel(ctx, js, sha, f.Path); err != nil {
			reply = err.Error()
		}
		m.Respond([]byte(reply))
	})
}

func putModel(ctx context.Context, js jetstream.JetStream, sha, path string) error {
	obs, err := modelStore(ctx, js)
	if err != nil {
		return err
	}
	if _, err := obs.GetInfo(ctx, sha); err == nil {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = obs.Put(ctx, jetstream.ObjectMeta{Name: sha, Description: filepath.Base(path)}, f)
	return err
}

// FetchModel brings the model file of sha256 sha from the fleet to path: it asks
// the run's submitter to put it in ModelsBucket when it is not there yet, writes it
// beside path and renames it into place only once its sha256 is checked.
func FetchModel(ctx context.Context, js jetstream.JetStream, nc *nats.Conn, run, sha, path string) error {
	obs, err := modelStore(ctx, js)
	if err != nil {
		return err
	}
	if _, err := obs.GetInfo(ctx, sha); err != nil {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		reply, err := nc.RequestWithContext(rctx, wantSubject(run), []byte(sha))
		cancel()
		if err != nil {
			return fmt.Errorf("asking the submitter for it: %w (has its run ended?)", err)
		}
		if len(reply.Data) > 0 {
			return errors.New(string(reply.Data))
		}
	}
	obj, err := obs.Get(ctx, sha)
	if err != nil {
		return err
	}
	defer obj.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".fetch-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, h), obj)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		return fmt.Errorf("the fleet's copy has sha256 %s, not %s", short(got), short(sha))
	}
	return os.Rename(tmp.Name(), path)
}

// fetchPath is where a fetched model file goes: where this machine's resolution
// looks first for a real model, or for its fixture.
func fetchPath(root string, m catalog.Model, fixture bool) (string, error) {
	source := m.Source
	if fixture {
		source = m.Fixture
	}
	src, err := sources.Parse(source)
	if err != nil {
		return "", err
	}
	p := sources.LocalPath(root, spec.ModelOf(m).CatalogDir, src)
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("no local path for %s", source)
	}
	return p, nil
}
