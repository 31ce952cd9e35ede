package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// singlePacket is the referee's own floor, as spread's h2-single: one
// HTTP/2 connection, settings exchanged, then n POST /hit/{key} staged
// (each one's HEADERS sent, its stream left open), a PING answered (the
// server has read every HEADERS and started its handler), a pause, and
// then one write of n empty DATA frames that end the streams. Nothing a
// client does can arrive tighter than one write read by one server
// connection, so its spread is the floor a burst is held to. It waits
// for all n answers and fails unless each is 200.
func singlePacket(base string, n int, key string) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetNoDelay(true)
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))

	// Frames are written to out and sent by flush, each batch in one
	// write (the release is one packet), unless framing them failed.
	var out bytes.Buffer
	flush := func(framed error) error {
		if framed != nil {
			return framed
		}
		_, err := conn.Write(out.Bytes())
		out.Reset()
		return err
	}
	fr := http2.NewFramer(&out, conn)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	out.WriteString(http2.ClientPreface)
	if err := flush(errors.Join(
		fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0},
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20}),
		fr.WriteWindowUpdate(0, 1<<30-65535),
	)); err != nil {
		return err
	}
	// The server's settings first: its stream limit must allow n.
	for settled := false; !settled; {
		f, err := fr.ReadFrame()
		if err != nil {
			return fmt.Errorf("read the referee's settings: %w", err)
		}
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			if v, ok := sf.Value(http2.SettingMaxConcurrentStreams); ok && int(v) < n {
				return fmt.Errorf("the referee allows %d streams a connection, fewer than %d", v, n)
			}
			if err := fr.WriteSettingsAck(); err != nil {
				return err
			}
			settled = true
		}
	}

	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	for i := range n {
		hbuf.Reset()
		for _, f := range []hpack.HeaderField{
			{Name: ":method", Value: "POST"},
			{Name: ":scheme", Value: "http"},
			{Name: ":authority", Value: u.Host},
			{Name: ":path", Value: "/hit/" + key},
			{Name: "content-length", Value: "0"},
		} {
			_ = enc.WriteField(f)
		}
		id := uint32(2*i + 1)
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hbuf.Bytes(), EndHeaders: true}); err != nil {
			return err
		}
	}
	if err := flush(fr.WritePing(false, [8]byte{'s', 't', 'a', 'g', 'e', 'd'})); err != nil {
		return err
	}
	for acked := false; !acked; {
		f, err := fr.ReadFrame()
		if err != nil {
			return fmt.Errorf("wait for the PING's answer: %w", err)
		}
		switch f := f.(type) {
		case *http2.PingFrame:
			acked = f.IsAck()
		case *http2.MetaHeadersFrame, *http2.DataFrame, *http2.RSTStreamFrame, *http2.GoAwayFrame:
			return fmt.Errorf("the referee answered before the release: %v", f.Header())
		}
	}
	time.Sleep(50 * time.Millisecond) // spread burst's -settle
	for i := range n {
		if err := fr.WriteData(uint32(2*i+1), true, nil); err != nil {
			return err
		}
	}
	// The release: one write.
	if err := flush(nil); err != nil {
		return err
	}

	answered := 0
	for answered < n {
		f, err := fr.ReadFrame()
		if err != nil {
			return fmt.Errorf("%d of %d answers read: %w", answered, n, err)
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			code, _ := strconv.Atoi(f.PseudoValue("status"))
			if code != 200 {
				return fmt.Errorf("stream %d answered %d", f.StreamID, code)
			}
			if f.StreamEnded() {
				answered++
			}
		case *http2.DataFrame:
			if f.StreamEnded() {
				answered++
			}
		case *http2.RSTStreamFrame:
			return fmt.Errorf("stream %d reset: %v", f.StreamID, f.ErrCode)
		case *http2.GoAwayFrame:
			return fmt.Errorf("referee went away: %v", f.ErrCode)
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = fr.WritePing(true, f.Data)
				if _, err := conn.Write(out.Bytes()); err != nil {
					return err
				}
				out.Reset()
			}
		}
	}
	return nil
}
