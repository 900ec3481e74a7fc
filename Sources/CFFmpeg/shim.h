#ifndef SOUNDMARK_CFFMPEG_SHIM_H
#define SOUNDMARK_CFFMPEG_SHIM_H

#include <errno.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>
#include <libavutil/audio_fifo.h>
#include <libswresample/swresample.h>

// Function-like / cast macros that Swift cannot import, wrapped as inline functions.

static inline int soundmark_averror(int posixError) { return AVERROR(posixError); }
static inline int soundmark_averror_eof(void) { return AVERROR_EOF; }
static inline int soundmark_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int soundmark_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int soundmark_averror_demuxer_not_found(void) { return AVERROR_DEMUXER_NOT_FOUND; }
static inline int soundmark_averror_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }
static inline int soundmark_averror_protocol_not_found(void) { return AVERROR_PROTOCOL_NOT_FOUND; }
static inline int soundmark_averror_exit(void) { return AVERROR_EXIT; }
static inline int64_t soundmark_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int soundmark_av_log_quiet(void) { return AV_LOG_QUIET; }
static inline int soundmark_av_log_error(void) { return AV_LOG_ERROR; }
static inline int soundmark_av_disposition_attached_pic(void) { return AV_DISPOSITION_ATTACHED_PIC; }
static inline AVChannelLayout soundmark_av_channel_layout_mono(void) {
    AVChannelLayout layout = AV_CHANNEL_LAYOUT_MONO;
    return layout;
}

#endif
