package org.memtrace.symbols;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** The DWARF sections a {@link DwarfTypes} reads, little-endian views of their own. */
record DwarfSections(ByteBuffer info, ByteBuffer abbrev, ByteBuffer str, ByteBuffer lineStr, ByteBuffer strOffsets, ByteBuffer addr) {
    DwarfSections {
        info = info.slice().order(ByteOrder.LITTLE_ENDIAN);
        abbrev = abbrev.slice().order(ByteOrder.LITTLE_ENDIAN);
        str = str.slice();
        lineStr = lineStr.slice();
        strOffsets = strOffsets.slice().order(ByteOrder.LITTLE_ENDIAN);
        addr = addr.slice().order(ByteOrder.LITTLE_ENDIAN);
    }
}
