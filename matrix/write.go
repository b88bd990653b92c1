package matrix

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// JSON is the matrix as indented JSON, the stable interchange format.
func (m Matrix) JSON() ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Write writes matrix.md and matrix.json into dir (created if needed), each
// atomically: a reader sees the old file or the new one, never half of one.
func Write(dir string, m Matrix) error {
	js, err := m.JSON()
	if err != nil {
		return fmt.Errorf("encoding the matrix: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "matrix.json"), js); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "matrix.md"), m.Markdown())
}

func writeFile(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
