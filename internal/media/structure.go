package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"sync"
)

// structure is what walking an image file's blocks tells before decoding it.
type structure struct {
	end         int   // the offset just past the image's last block
	frames      int   // GIF frames
	scans       int   // JPEG scans
	framePixels int64 // GIF: the pixels of all frames together
	decodeBytes int64 // the memory a full decode needs, estimated from the pixels
	// extraBytes is what the decoder may need whatever the pixels: a
	// crafted lossless WebP can make x/image/webp build up to 2,600 groups
	// of Huffman trees (about 131 MiB, the library's own cap).
	extraBytes int64
	kind       string
	hint       string // how to make the image cheaper to decode
	// metaBytes are the bytes of blocks that hold no pixels (text, ICC
	// profiles, Exif, private data), which metaKind names for the format.
	metaBytes int64
	metaKind  string
}

var errTruncated = errors.New("the file ends before the image does")

// walk follows the blocks of a file of type ct to the image's end (a PNG's
// IEND chunk, a JPEG's end-of-image marker, a GIF's trailer, the end of a
// WebP's RIFF chunk) without decoding pixels, and estimates from cfg (the
// header) and the blocks seen what decoding it needs.
func walk(ct string, d []byte, cfg image.Config) (structure, error) {
	switch ct {
	case "image/png":
		return walkPNG(d, cfg)
	case "image/jpeg":
		return walkJPEG(d, cfg)
	case "image/gif":
		return walkGIF(d, cfg)
	case "image/webp":
		return walkWebP(d, cfg)
	}
	return structure{}, errors.New("unknown format")
}

func walkPNG(d []byte, cfg image.Config) (structure, error) {
	if len(d) < 8 || string(d[:8]) != "\x89PNG\r\n\x1a\n" {
		return structure{}, errors.New("no PNG signature")
	}
	var depth, colorType, interlace byte
	trns := false
	pos := 8
	var meta int64
	for {
		if len(d)-pos < 12 {
			return structure{}, errors.New("the file ends before the IEND chunk")
		}
		n := binary.BigEndian.Uint32(d[pos:])
		typ := string(d[pos+4 : pos+8])
		if n > 1<<31-1 || int64(n) > int64(len(d)-pos-12) {
			return structure{}, fmt.Errorf("the file ends inside the %q chunk", typ)
		}
		body := d[pos+8 : pos+8+int(n)]
		switch typ {
		case "IHDR":
			if len(body) >= 13 {
				depth, colorType, interlace = body[8], body[9], body[12]
			}
		case "tRNS":
			trns = true
		}
		if typ[0]&0x20 != 0 { // an ancillary chunk (lower-case first letter)
			meta += 12 + int64(n)
		}
		pos += 12 + int(n)
		if typ == "IEND" {
			break
		}
	}
	// Bytes per pixel of the image Go's decoder builds for this colour type.
	bpp := int64(4)
	switch {
	case colorType == 3:
		bpp = 1
	case colorType == 0 && !trns:
		bpp = 1
	}
	if depth == 16 {
		bpp *= 2
		if colorType == 0 && !trns {
			bpp = 2
		}
	}
	px := int64(cfg.Width) * int64(cfg.Height)
	st := structure{end: pos, kind: "PNG", decodeBytes: px*bpp + 2*(1+int64(cfg.Width)*8),
		metaBytes: meta, metaKind: "ancillary chunks (text, profiles, private data)"}
	if depth == 16 {
		st.kind, st.hint = "16-bit PNG", " or save it with 8 bits per channel"
	}
	if interlace == 1 {
		// Each pass is decoded into its own image, then merged.
		st.decodeBytes += px * bpp
		st.kind, st.hint = "interlaced "+st.kind, st.hint+" or save it without interlacing"
	}
	return st, nil
}

func walkJPEG(d []byte, cfg image.Config) (structure, error) {
	if len(d) < 2 || d[0] != 0xFF || d[1] != 0xD8 {
		return structure{}, errors.New("no JPEG start-of-image marker")
	}
	type component struct {
		id   byte
		h, v int64
	}
	var comps []component
	progressive, jfif, adobe := false, false, -1
	scans := 0
	pos := 2
	var meta int64
	for {
		// Markers may be preceded by fill bytes (0xFF); like libjpeg and
		// Go's decoder, other bytes between segments are skipped.
		i := bytes.IndexByte(d[pos:], 0xFF)
		if i < 0 {
			return structure{}, errors.New("the file ends before the end-of-image marker")
		}
		pos += i
		for pos < len(d) && d[pos] == 0xFF {
			pos++
		}
		if pos >= len(d) {
			return structure{}, errors.New("the file ends before the end-of-image marker")
		}
		m := d[pos]
		pos++
		if m == 0xD9 {
			break // end of image
		}
		if m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= 0xD7) {
			continue // a stuffed byte or a marker without a segment
		}
		if len(d)-pos < 2 {
			return structure{}, errTruncated
		}
		n := int(binary.BigEndian.Uint16(d[pos:]))
		if n < 2 {
			return structure{}, fmt.Errorf("a segment of length %d", n)
		}
		if n > len(d)-pos {
			return structure{}, errTruncated
		}
		seg := d[pos+2 : pos+n]
		pos += n
		if m >= 0xE0 && m <= 0xEF || m == 0xFE { // APPn (Exif, ICC, XMP, ...) and comments
			meta += int64(n) + 2
		}
		switch {
		case m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC: // start of frame
			progressive = m == 0xC2 || m == 0xC6 || m == 0xCA || m == 0xCE
			if len(seg) >= 6 {
				nc := int(seg[5])
				comps = comps[:0]
				for c := range nc {
					if 6+3*c+2 >= len(seg) {
						break
					}
					hv := seg[6+3*c+1]
					comps = append(comps, component{seg[6+3*c], int64(hv >> 4), int64(hv & 15)})
				}
			}
		case m == 0xE0 && len(seg) >= 5 && string(seg[:5]) == "JFIF\x00":
			jfif = true
		case m == 0xEE && len(seg) >= 12 && string(seg[:5]) == "Adobe":
			adobe = int(seg[11])
		case m == 0xDA: // start of scan: entropy-coded data up to the next real marker
			scans++
			for pos < len(d) {
				i := bytes.IndexByte(d[pos:], 0xFF)
				if i < 0 || pos+i+1 >= len(d) {
					pos = len(d)
					break
				}
				pos += i
				next := d[pos+1]
				if next == 0x00 || (next >= 0xD0 && next <= 0xD7) {
					pos += 2 // a stuffed 0xFF or a restart marker
					continue
				}
				if next == 0xFF {
					pos++ // a fill byte
					continue
				}
				break
			}
		}
	}
	w, h := int64(cfg.Width), int64(cfg.Height)
	st := structure{end: pos, kind: "JPEG", scans: scans, metaBytes: meta, metaKind: "APP and comment segments (Exif, profiles, XMP, comments)"}
	// Planes (rounded up to whole blocks) per component; a progressive
	// decode also keeps 64 int32 coefficients per 8×8 block.
	var hmax, vmax int64 = 1, 1
	for _, c := range comps {
		hmax, vmax = max(hmax, c.h), max(vmax, c.v)
	}
	perPlane := int64(1)
	if progressive {
		perPlane = 5
		st.kind, st.hint = "progressive JPEG", " or save it as a baseline (not progressive) JPEG"
	}
	for _, c := range comps {
		cw := (w*max(c.h, 1)+hmax-1)/hmax + 16
		ch := (h*max(c.v, 1)+vmax-1)/vmax + 16
		st.decodeBytes += cw * ch * perPlane
	}
	// Go's decoder converts CMYK and RGB (as it recognises them) into a
	// second image of 4 bytes per pixel.
	rgb := len(comps) == 3 && !jfif && (adobe == 0 || comps[0].id == 'R' && comps[1].id == 'G' && comps[2].id == 'B')
	if len(comps) == 0 || len(comps) == 4 || rgb {
		st.decodeBytes += 4 * w * h
	}
	return st, nil
}

func walkGIF(d []byte, cfg image.Config) (structure, error) {
	if len(d) < 13 {
		return structure{}, errTruncated
	}
	pos := 13
	if flags := d[10]; flags&0x80 != 0 {
		pos += 3 << ((flags & 7) + 1) // global colour table
	}
	st := structure{kind: "GIF", metaKind: "extension blocks (comments, application data)"}
	// skip passes a sequence of data sub-blocks ending with an empty one.
	skip := func() error {
		for {
			if pos >= len(d) {
				return errTruncated
			}
			n := int(d[pos])
			pos += 1 + n
			if n == 0 {
				return nil
			}
		}
	}
	for {
		if pos >= len(d) {
			return structure{}, errors.New("the file ends before the GIF trailer")
		}
		b := d[pos]
		pos++
		switch b {
		case 0x21: // extension: label, sub-blocks
			start := pos - 1
			control := pos < len(d) && d[pos] == 0xF9
			pos++
			if err := skip(); err != nil {
				return structure{}, err
			}
			if !control { // comments, application and plain-text blocks
				st.metaBytes += int64(pos - start)
			}
		case 0x2C: // image descriptor
			if len(d)-pos < 9 {
				return structure{}, errTruncated
			}
			fw, fh := int64(binary.LittleEndian.Uint16(d[pos+4:])), int64(binary.LittleEndian.Uint16(d[pos+6:]))
			flags := d[pos+8]
			pos += 9
			if flags&0x80 != 0 {
				pos += 3 << ((flags & 7) + 1) // local colour table
			}
			pos++ // LZW minimum code size
			if err := skip(); err != nil {
				return structure{}, err
			}
			st.frames++
			st.framePixels += fw * fh
		case 0x3B: // trailer
			st.end = pos
			if st.frames > 1 {
				st.kind = "animated GIF"
			}
			// DecodeAll keeps every frame (one byte per pixel, and its
			// own image and palette); an interlaced frame is copied once more.
			st.decodeBytes = 2*st.framePixels + int64(st.frames)<<12 + int64(cfg.Width)*int64(cfg.Height) + 1<<16
			return st, nil
		default:
			return structure{}, fmt.Errorf("an unknown block 0x%02x", b)
		}
	}
}

func walkWebP(d []byte, cfg image.Config) (structure, error) {
	if len(d) < 12 || string(d[:4]) != "RIFF" || string(d[8:12]) != "WEBP" {
		return structure{}, errors.New("no RIFF WebP header")
	}
	end := 8 + int64(binary.LittleEndian.Uint32(d[4:]))
	if end > int64(len(d)) {
		return structure{}, errTruncated
	}
	lossless, alpha := false, false
	var meta int64
	for pos := int64(12); pos+8 <= end; {
		n := int64(binary.LittleEndian.Uint32(d[pos+4:]))
		switch string(d[pos : pos+4]) {
		case "VP8L":
			lossless = true
		case "ALPH":
			alpha = true
		case "VP8 ", "VP8X", "ANIM", "ANMF":
		default: // EXIF, XMP , ICCP and unknown chunks
			meta += 8 + n + n&1
		}
		pos += 8 + n + n&1
	}
	px := int64(cfg.Width) * int64(cfg.Height)
	// Lossy: YCbCr 4:2:0 rounded to macroblocks; an alpha plane may be
	// coded losslessly (decoded as NRGBA, then kept as one byte per pixel).
	st := structure{end: int(end), kind: "WebP", decodeBytes: 2*px + 1<<20, metaBytes: meta, metaKind: "metadata chunks (Exif, XMP, profiles)"}
	switch {
	case lossless:
		// NRGBA, and as much again for a colour-indexing transform.
		st.kind, st.decodeBytes = "lossless WebP", 8*px+1<<20
	case alpha:
		st.decodeBytes = 7*px + 1<<20
	}
	if lossless || alpha {
		st.extraBytes = 131 << 20
	}
	return st, nil
}

// budget is a counting semaphore over bytes.
type budget struct {
	mu    sync.Mutex
	freed sync.Cond
	free  int64
}

func newBudget(n int64) *budget {
	b := &budget{free: n}
	b.freed.L = &b.mu
	return b
}

func (b *budget) acquire(n int64) {
	b.mu.Lock()
	for b.free < n {
		b.freed.Wait()
	}
	b.free -= n
	b.mu.Unlock()
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.free += n
	b.mu.Unlock()
	b.freed.Broadcast()
}

// decodeBudget is shared by every decode in the process (Check refuses
// images whose pixels need more than all of it): the memory decoding takes
// stays under MaxDecodeBytes however many uploads run at once. A decode
// that may need more than the budget whatever its pixels (lossless WebP)
// takes all of it and runs alone.
var decodeBudget = newBudget(MaxDecodeBytes)
