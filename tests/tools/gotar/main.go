// gotar lists tar archives as Go's archive/tar reads them: the reader
// containerd, Docker and umoci extract layers with. It is the reference
// the auditor's own tar reader (auditor/tarstream.rs) is held to by
// tests/it/tar_readers.rs and the fuzz target tar_readers.
//
//	gotar FILE...  one listing per file
//	gotar -serve   archives on stdin, each as an 8-byte big-endian length and
//	               its bytes; a listing for each on stdout
//
// A listing is one JSON object per entry ({"name", "link"} in hex, the
// "type" flag as a number, "len" and "sha256" of the data the reader hands
// out), then {"error": ...} when the
// reader stops on an error, then an empty line. Global PAX headers, which
// Go returns as entries, are left out: no extractor applies them.
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

type entry struct {
	Name   string `json:"name"`
	Link   string `json:"link"`
	Type   byte   `json:"type"`
	Len    int64  `json:"len"`
	Sha256 string `json:"sha256"`
}

func list(r io.Reader, w *bufio.Writer) {
	enc := json.NewEncoder(w)
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			enc.Encode(map[string]string{"error": err.Error()})
			break
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		sum := sha256.New()
		n, err := io.Copy(sum, tr)
		if err != nil {
			enc.Encode(map[string]string{"error": err.Error()})
			break
		}
		kind := h.Typeflag
		if kind == tar.TypeCont {
			kind = tar.TypeReg // a regular file to every extractor
		}
		enc.Encode(entry{hex.EncodeToString([]byte(h.Name)), hex.EncodeToString([]byte(h.Linkname)), kind, n, hex.EncodeToString(sum.Sum(nil))})
	}
	w.WriteString("\n")
	w.Flush()
}

func main() {
	w := bufio.NewWriter(os.Stdout)
	if len(os.Args) == 2 && os.Args[1] == "-serve" {
		in := bufio.NewReader(os.Stdin)
		for {
			var size uint64
			if err := binary.Read(in, binary.BigEndian, &size); err != nil {
				return
			}
			data := make([]byte, size)
			if _, err := io.ReadFull(in, data); err != nil {
				return
			}
			list(bytes.NewReader(data), w)
		}
	}
	for _, path := range os.Args[1:] {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		list(f, w)
		f.Close()
	}
}
