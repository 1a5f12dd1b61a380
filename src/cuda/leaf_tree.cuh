/* A tree over static items built on the host (core/leaf_tree.h), copied to the device as it is: 2D's
 * segment tree (cuda_backend.cu) and 3D's triangle tree (cuda3.cu). TREE is ad_bvh or ad_bvh3, BOX
 * its box (ad_bvh_box or ad_bvh_box3). */
#ifndef AD_CUDA_LEAF_TREE_CUH
#define AD_CUDA_LEAF_TREE_CUH

#include <cuda_runtime.h>

#include <cstring>

template <class BOX, class TREE>
struct ad_dev_tree {
    unsigned *child, *rightmost, *item; /* item: leaf k is item[k] */
    BOX *box, *leaf_box;
    TREE t; /* what the kernels' walks read: the device arrays above (n = 0: no tree) */
};

template <class BOX, class TREE>
static void ad_dev_tree_free(ad_dev_tree<BOX, TREE> *d)
{
    void *p[] = {d->child, d->rightmost, d->item, d->box, d->leaf_box};
    for (void *q : p)
        if (q) cudaFree(q);
    memset(d, 0, sizeof *d);
}

/* The host tree h (its n leaves' boxes and items, its n - 1 internal nodes) into *d, replacing what *d
 * held. */
template <class BOX, class TREE>
static cudaError_t ad_dev_tree_upload(ad_dev_tree<BOX, TREE> *d, const TREE &h, const unsigned *item)
{
    ad_dev_tree_free(d);
    size_t n = h.n, m = n > 1 ? n - 1 : 1;
    if (n == 0) return cudaSuccess;
    cudaError_t e = cudaMalloc((void **)&d->child, 2 * m * 4);
    if (!e) e = cudaMalloc((void **)&d->rightmost, m * 4);
    if (!e) e = cudaMalloc((void **)&d->box, m * sizeof(BOX));
    if (!e) e = cudaMalloc((void **)&d->leaf_box, n * sizeof(BOX));
    if (!e) e = cudaMalloc((void **)&d->item, n * 4);
    if (!e && n > 1) e = cudaMemcpy(d->child, h.child, 2 * (n - 1) * 4, cudaMemcpyHostToDevice);
    if (!e && n > 1) e = cudaMemcpy(d->rightmost, h.rightmost, (n - 1) * 4, cudaMemcpyHostToDevice);
    if (!e && n > 1) e = cudaMemcpy(d->box, h.box, (n - 1) * sizeof(BOX), cudaMemcpyHostToDevice);
    if (!e) e = cudaMemcpy(d->leaf_box, h.leaf_box, n * sizeof(BOX), cudaMemcpyHostToDevice);
    if (!e) e = cudaMemcpy(d->item, item, n * 4, cudaMemcpyHostToDevice);
    if (e) {
        ad_dev_tree_free(d);
        return e;
    }
    d->t = h;
    d->t.child = d->child;
    d->t.rightmost = d->rightmost;
    d->t.box = d->box;
    d->t.point = NULL;
    d->t.leaf_box = d->leaf_box;
    return cudaSuccess;
}

#endif
