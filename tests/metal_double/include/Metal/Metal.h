// The Metal test double's <Metal/Metal.h>: the subset of Apple's Metal API that the
// dotcompute plugin (metal/) uses, declared with Apple's protocol, selector, enum and
// function names so that the plugin's sources compile unchanged against either this
// header (Linux, GNUstep Foundation, manual retain/release) or the real framework.
//
// Written from Apple's public documentation; only the names and values the plugin needs.
// What the double does behind these declarations is in ../../metal_double.mm and ../../double_commands.mm.
#ifndef DOTCOMPUTE_METAL_DOUBLE_METAL_H
#define DOTCOMPUTE_METAL_DOUBLE_METAL_H

#import <Foundation/Foundation.h>
#include <stdint.h>

// The double is a test fixture: the plugin may ask whether it runs against it.
#define DC_METAL_TEST_DOUBLE 1

typedef struct {
  NSUInteger width, height, depth;
} MTLSize;

static inline MTLSize MTLSizeMake(NSUInteger w, NSUInteger h, NSUInteger d) {
  MTLSize s = {w, h, d};
  return s;
}

typedef NS_ENUM(NSInteger, MTLGPUFamily) {
  MTLGPUFamilyApple1 = 1001, MTLGPUFamilyApple2 = 1002, MTLGPUFamilyApple3 = 1003, MTLGPUFamilyApple4 = 1004,
  MTLGPUFamilyApple5 = 1005, MTLGPUFamilyApple6 = 1006, MTLGPUFamilyApple7 = 1007, MTLGPUFamilyApple8 = 1008,
  MTLGPUFamilyApple9 = 1009,
  MTLGPUFamilyMac2 = 2002,
  MTLGPUFamilyCommon1 = 3001, MTLGPUFamilyCommon2 = 3002, MTLGPUFamilyCommon3 = 3003,
  MTLGPUFamilyMetal3 = 5001,
};

typedef NS_OPTIONS(NSUInteger, MTLResourceOptions) {
  MTLResourceCPUCacheModeDefaultCache = 0,
  MTLResourceStorageModeShared = 0 << 4,
  MTLResourceStorageModeManaged = 1 << 4,
  MTLResourceStorageModePrivate = 2 << 4,
  MTLResourceHazardTrackingModeDefault = 0 << 8,
};

typedef NS_ENUM(NSUInteger, MTLStorageMode) {
  MTLStorageModeShared = 0,
  MTLStorageModeManaged = 1,
  MTLStorageModePrivate = 2,
  MTLStorageModeMemoryless = 3,
};

typedef NS_OPTIONS(NSUInteger, MTLPipelineOption) {
  MTLPipelineOptionNone = 0,
  MTLPipelineOptionArgumentInfo = 1 << 0,
  MTLPipelineOptionBufferTypeInfo = 1 << 1,
  MTLPipelineOptionFailOnBinaryArchiveMiss = 1 << 2,
};

typedef NS_ENUM(NSUInteger, MTLBinaryArchiveError) {
  MTLBinaryArchiveErrorNone = 0,
  MTLBinaryArchiveErrorInvalidFile = 1,
  MTLBinaryArchiveErrorUnexpectedElement = 2,
  MTLBinaryArchiveErrorCompilationFailure = 3,
  MTLBinaryArchiveErrorInternalError = 4,
};

typedef NS_ENUM(NSUInteger, MTLLanguageVersion) {
  MTLLanguageVersion2_4 = (2 << 16) + 4,
  MTLLanguageVersion3_0 = (3 << 16) + 0,
  MTLLanguageVersion3_1 = (3 << 16) + 1,
};

typedef NS_ENUM(NSUInteger, MTLCommandBufferStatus) {
  MTLCommandBufferStatusNotEnqueued = 0,
  MTLCommandBufferStatusEnqueued = 1,
  MTLCommandBufferStatusCommitted = 2,
  MTLCommandBufferStatusScheduled = 3,
  MTLCommandBufferStatusCompleted = 4,
  MTLCommandBufferStatusError = 5,
};

typedef NS_ENUM(NSUInteger, MTLCommandBufferError) {
  MTLCommandBufferErrorNone = 0,
  MTLCommandBufferErrorInternal = 1,
  MTLCommandBufferErrorTimeout = 2,
  MTLCommandBufferErrorPageFault = 3,
  MTLCommandBufferErrorOutOfMemory = 8,
  MTLCommandBufferErrorInvalidResource = 9,
};

typedef NS_ENUM(NSUInteger, MTLLibraryError) {
  MTLLibraryErrorUnsupported = 1,
  MTLLibraryErrorInternal = 2,
  MTLLibraryErrorCompileFailure = 3,
  MTLLibraryErrorCompileWarning = 4,
  MTLLibraryErrorFunctionNotFound = 5,
  MTLLibraryErrorFileNotFound = 6,
};

extern NSString* const MTLLibraryErrorDomain;
extern NSString* const MTLCommandBufferErrorDomain;
extern NSString* const MTLBinaryArchiveDomain;

@protocol MTLDevice;
@protocol MTLCommandBuffer;

@protocol MTLResource <NSObject>
@property(readonly) id<MTLDevice> device;
@property(readonly) MTLStorageMode storageMode;
@end

@protocol MTLBuffer <MTLResource>
@property(readonly) NSUInteger length;
- (void*)contents;  // NULL for private storage, as on Apple GPUs
@end

@protocol MTLFunction <NSObject>
@property(readonly) NSString* name;
@end

@protocol MTLLibrary <NSObject>
@property(readonly) NSArray<NSString*>* functionNames;
- (id<MTLFunction>)newFunctionWithName:(NSString*)functionName;
@end

@class MTLComputePipelineDescriptor;

@protocol MTLBinaryArchive <NSObject>
@property(readonly) id<MTLDevice> device;
- (BOOL)addComputePipelineFunctionsWithDescriptor:(MTLComputePipelineDescriptor*)descriptor error:(NSError**)error;
- (BOOL)serializeToURL:(NSURL*)url error:(NSError**)error;
@end

@interface MTLBinaryArchiveDescriptor : NSObject <NSCopying> {
  NSURL* url_;
}
@property(readwrite, nonatomic, copy) NSURL* url;  // nil: a new, empty archive
@end

@interface MTLComputePipelineDescriptor : NSObject <NSCopying> {
  id<MTLFunction> computeFunction_;
  NSArray<id<MTLBinaryArchive>>* binaryArchives_;
}
@property(readwrite, nonatomic, retain) id<MTLFunction> computeFunction;
@property(readwrite, nonatomic, copy) NSArray<id<MTLBinaryArchive>>* binaryArchives;
@end

@class MTLComputePipelineReflection;
typedef MTLComputePipelineReflection* MTLAutoreleasedComputePipelineReflection;

@protocol MTLComputePipelineState <NSObject>
@property(readonly) NSUInteger maxTotalThreadsPerThreadgroup;
@property(readonly) NSUInteger threadExecutionWidth;
@property(readonly) NSUInteger staticThreadgroupMemoryLength;
@end

@protocol MTLEvent <NSObject>
@end

@protocol MTLSharedEvent <MTLEvent>
@property uint64_t signaledValue;
@end

@protocol MTLCommandEncoder <NSObject>
- (void)endEncoding;
@end

@protocol MTLComputeCommandEncoder <MTLCommandEncoder>
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state;
- (void)setBuffer:(id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index;
- (void)setBytes:(const void*)bytes length:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)setThreadgroupMemoryLength:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)dispatchThreads:(MTLSize)threadsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
- (void)dispatchThreadgroups:(MTLSize)threadgroupsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
@end

@protocol MTLBlitCommandEncoder <MTLCommandEncoder>
- (void)copyFromBuffer:(id<MTLBuffer>)sourceBuffer
          sourceOffset:(NSUInteger)sourceOffset
              toBuffer:(id<MTLBuffer>)destinationBuffer
     destinationOffset:(NSUInteger)destinationOffset
                  size:(NSUInteger)size;
- (void)fillBuffer:(id<MTLBuffer>)buffer range:(NSRange)range value:(uint8_t)value;
@end

typedef void (^MTLCommandBufferHandler)(id<MTLCommandBuffer>);

@protocol MTLCommandBuffer <NSObject>
@property(readonly) MTLCommandBufferStatus status;
@property(readonly) NSError* error;
@property(readonly) double GPUStartTime;  // seconds, host-comparable clock
@property(readonly) double GPUEndTime;
- (id<MTLComputeCommandEncoder>)computeCommandEncoder;
- (id<MTLBlitCommandEncoder>)blitCommandEncoder;
- (void)encodeSignalEvent:(id<MTLEvent>)event value:(uint64_t)value;
- (void)encodeWaitForEvent:(id<MTLEvent>)event value:(uint64_t)value;
- (void)addCompletedHandler:(MTLCommandBufferHandler)block;
- (void)commit;
- (void)waitUntilCompleted;
@end

@protocol MTLCommandQueue <NSObject>
- (id<MTLCommandBuffer>)commandBuffer;
@end

@interface MTLCompileOptions : NSObject <NSCopying> {
  // the double's storage (the GNU runtime has fragile instance variables: they live here)
  BOOL fastMathEnabled_;
  MTLLanguageVersion languageVersion_;
}
@property(readwrite, nonatomic) BOOL fastMathEnabled;
@property(readwrite, nonatomic) MTLLanguageVersion languageVersion;
@end

@protocol MTLDevice <NSObject>
@property(readonly) NSString* name;
@property(readonly) uint64_t registryID;
@property(readonly) MTLSize maxThreadsPerThreadgroup;
@property(readonly) NSUInteger maxThreadgroupMemoryLength;
@property(readonly) uint64_t recommendedMaxWorkingSetSize;
@property(readonly) NSUInteger maxBufferLength;
@property(readonly) BOOL hasUnifiedMemory;
- (BOOL)supportsFamily:(MTLGPUFamily)gpuFamily;
- (id<MTLBuffer>)newBufferWithLength:(NSUInteger)length options:(MTLResourceOptions)options;
- (id<MTLBuffer>)newBufferWithBytes:(const void*)pointer length:(NSUInteger)length
                            options:(MTLResourceOptions)options;
- (id<MTLCommandQueue>)newCommandQueue;
- (id<MTLLibrary>)newLibraryWithSource:(NSString*)source
                               options:(MTLCompileOptions*)options
                                 error:(NSError**)error;
- (id<MTLComputePipelineState>)newComputePipelineStateWithFunction:(id<MTLFunction>)computeFunction
                                                             error:(NSError**)error;
- (id<MTLComputePipelineState>)newComputePipelineStateWithDescriptor:(MTLComputePipelineDescriptor*)descriptor
                                                             options:(MTLPipelineOption)options
                                                          reflection:(MTLAutoreleasedComputePipelineReflection*)reflection
                                                               error:(NSError**)error;
- (id<MTLBinaryArchive>)newBinaryArchiveWithDescriptor:(MTLBinaryArchiveDescriptor*)descriptor
                                                 error:(NSError**)error;
- (id<MTLSharedEvent>)newSharedEvent;
@end

#ifdef __cplusplus
extern "C" {
#endif
// Returns a retained array (the Create rule).
NSArray<id<MTLDevice>>* MTLCopyAllDevices(void);
id<MTLDevice> MTLCreateSystemDefaultDevice(void);
#ifdef __cplusplus
}
#endif

#endif
