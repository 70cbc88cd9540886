package org.memtrace.event;

import java.lang.foreign.MemorySegment;

/** The framing checks the ring applies before a record is handed on (SavedStream makes the same ones on its byte array). */
final class Records {
    private Records() {}

    /** Returns the record's size after checking it is a whole number of 8-byte words within {@code room}. */
    static int checkedSize(MemorySegment s, long off, long room, long position) {
        int size = EventDecoder.size(s, off);
        if (size < StreamLayout.RECORD_HEADER_SIZE || size % 8 != 0)
            throw new StreamFormatException(position, "record size " + size + " is not a positive multiple of 8");
        if (size > room)
            throw new StreamFormatException(position, "record of " + size + " bytes overruns the published data ("
                    + room + " bytes left)");
        return size;
    }
}
