package protocol

import (
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// BenchmarkMessages are the descriptors of the arena's benchmark.proto messages, by name:
// SumRequest, StreamRequest and SumReply (all fields int32; a, b and count are fields 1, 2
// and 3, result is field 1). The checks' client and the fixture servers both use them.
var BenchmarkMessages = sync.OnceValues(func() (map[string]protoreflect.MessageDescriptor, error) {
	field := func(name string, n int32) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{
			Name: proto.String(name), JsonName: proto.String(name), Number: proto.Int32(n),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			Type:  descriptorpb.FieldDescriptorProto_TYPE_INT32.Enum(),
		}
	}
	msg := func(name string, fields ...string) *descriptorpb.DescriptorProto {
		d := &descriptorpb.DescriptorProto{Name: proto.String(name)}
		for i, f := range fields {
			d.Field = append(d.Field, field(f, int32(i+1)))
		}
		return d
	}
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: proto.String("arenabot/benchmark.proto"), Package: proto.String("benchmark"),
		Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			msg("SumRequest", "a", "b"), msg("StreamRequest", "a", "b", "count"), msg("SumReply", "result"),
		},
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("benchmark.proto descriptor: %w", err)
	}
	out := map[string]protoreflect.MessageDescriptor{}
	for i := range fd.Messages().Len() {
		m := fd.Messages().Get(i)
		out[string(m.Name())] = m
	}
	return out, nil
})
