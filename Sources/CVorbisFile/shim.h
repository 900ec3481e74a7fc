#ifndef SOUNDMARK_CVORBISFILE_SHIM_H
#define SOUNDMARK_CVORBISFILE_SHIM_H

// libvorbisfile (Debian libvorbis-dev): the fallback for Ogg Vorbis files FFmpeg refuses.
#include <vorbis/vorbisfile.h>

#endif
