// Package mediatest builds the images and archives that attack an upload:
// trailing bytes, huge pixel counts, zlib and zip bombs. For tests only.
package mediatest

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
)

// PNGChunk encodes one PNG chunk with its CRC.
func PNGChunk(typ string, body []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(len(body)))
	b.WriteString(typ)
	b.Write(body)
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(body)
	binary.Write(&b, binary.BigEndian, crc.Sum32())
	return b.Bytes()
}

// RawPNG writes a PNG with the given header whose IDAT is the zlib stream
// of rawLen zero bytes (filter bytes and pixels); only the compressed
// stream is ever in memory.
func RawPNG(w, h int, depth, colorType byte, rawLen int64) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = depth, colorType
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, PNGChunk("IHDR", ihdr)...)
	out = append(out, PNGChunk("IDAT", ZeroZlib(rawLen))...)
	return append(out, PNGChunk("IEND", nil)...)
}

// ZeroZlib is the zlib stream of n zero bytes, made without compressing
// them all: a segment of zeros compressed once and ended with a sync flush
// is valid again after any zeros (its back-references only ever see
// zeros), so the stream repeats it.
func ZeroZlib(n int64) []byte {
	const seg = 16 << 20
	deflate := func(size int64, final bool) []byte {
		var b bytes.Buffer
		fw, _ := flate.NewWriter(&b, flate.BestCompression)
		fw.Write(make([]byte, size))
		if final {
			fw.Close()
		} else {
			fw.Flush()
		}
		return b.Bytes()
	}
	out := []byte{0x78, 0xDA} // zlib header, best compression
	if n > seg {
		block := deflate(seg, false)
		for left := n; left > seg; left -= seg {
			out = append(out, block...)
		}
	}
	out = append(out, deflate((n-1)%seg+1, true)...)
	// Adler-32 of n zeros: A stays 1, B adds 1 per byte.
	return binary.BigEndian.AppendUint32(out, uint32(n%65521)<<16|1)
}

// HugeHeaderPNG declares 50,000 × 50,000 RGBA pixels and holds almost none.
func HugeHeaderPNG() []byte { return RawPNG(50000, 50000, 8, 6, 1<<10) }

// ZlibBombPNG declares 20,000 × 20,000 RGBA pixels; full holds all their
// (zero) bytes compressed, 1.6 GB of pixels in about 1.6 MB, else only a
// few rows.
func ZlibBombPNG(full bool) []byte {
	n := int64(1 << 16)
	if full {
		n = 20000 * (1 + 20000*4)
	}
	return RawPNG(20000, 20000, 8, 6, n)
}

// SmallPNG is a real 2×2 PNG whose colour depends on seed.
func SmallPNG(seed uint8) []byte {
	m := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	m.Set(1, 1, color.NRGBA{200, seed, 10, 255})
	var b bytes.Buffer
	png.Encode(&b, m)
	return b.Bytes()
}

// PaddedPNG is a 2×2 PNG padded with zeros to size bytes.
func PaddedPNG(size int) []byte {
	p := SmallPNG(0)
	return append(p, make([]byte, size-len(p))...)
}

// PaddedZip is a zip of n entries, each a 2×2 PNG padded with zeros to
// entrySize bytes (the probe's bomb: 100 entries of 10 MiB in about 1 MB).
// The entry is compressed once and stored n times.
func PaddedZip(n, entrySize int) []byte { return RepeatZip(n, PaddedPNG(entrySize)) }

// RepeatZip is a zip of n entries img000.png... each holding img, which is
// compressed once and stored n times (so that a bomb is quick to build).
func RepeatZip(n int, img []byte) []byte {
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.DefaultCompression)
	fw.Write(img)
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range n {
		w, _ := zw.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("img%03d.png", i), Method: zip.Deflate,
			CRC32: crc32.ChecksumIEEE(img), CompressedSize64: uint64(comp.Len()), UncompressedSize64: uint64(len(img))})
		w.Write(comp.Bytes())
	}
	zw.Close()
	return buf.Bytes()
}

// Zip is an archive of the given files (name, content), deflated.
func Zip(files ...[2]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, _ := zw.Create(f[0])
		w.Write([]byte(f[1]))
	}
	zw.Close()
	return buf.Bytes()
}

// NoisePNG is a real w×h PNG of random opaque pixels (seeded): it does not
// compress, so its size is about 4·w·h bytes.
func NoisePNG(w, h int, seed uint64) []byte {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	x := seed*0x9E3779B97F4A7C15 + 1
	for i := 0; i < len(m.Pix); i += 4 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		m.Pix[i], m.Pix[i+1], m.Pix[i+2], m.Pix[i+3] = byte(x), byte(x>>8), byte(x>>16), 255
	}
	var b bytes.Buffer
	(&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&b, m)
	return b.Bytes()
}

// AncillaryPNG is a real 2×2 PNG carrying a private ancillary chunk
// ("zzZz") of n zero bytes before its end: a whole, valid image that a zip
// compresses a thousandfold (the probe's 1 MB zip that stored 1 GB).
func AncillaryPNG(n int, seed uint8) []byte {
	p := SmallPNG(seed)
	end := len(p) - 12 // the IEND chunk
	out := append([]byte{}, p[:end]...)
	out = append(out, PNGChunk("zzZz", make([]byte, n))...)
	return append(out, p[end:]...)
}

// ZipOf is an archive of the given files (name, content), deflated.
func ZipOf(files map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range files {
		w, _ := zw.Create(name)
		w.Write(data)
	}
	zw.Close()
	return buf.Bytes()
}
