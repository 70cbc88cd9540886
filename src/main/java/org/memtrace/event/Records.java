package org.memtrace.event;

/** The framing checks the ring applies before a record is handed on (SavedStream makes the same ones on its byte array). */
final class Records {
    private Records() {}

    /**
     * Returns the size of the record whose first word (type, flags, size, tid) is {@code header} after checking
     * it is a whole number of 8-byte words within {@code room}.
     */
    static int checkedSize(long header, long room, long position) {
        int size = (int) (header >>> 16 & 0xffff);
        if (size < StreamLayout.RECORD_HEADER_SIZE || size % 8 != 0)
            throw new StreamFormatException(position, "record size " + size + " is not a positive multiple of 8");
        if (size > room)
            throw new StreamFormatException(position, "record of " + size + " bytes overruns the published data ("
                    + room + " bytes left)");
        return size;
    }
}
